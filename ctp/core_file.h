/* A core file of a Linux x86-64 process, read with libelf: its memory (the PT_LOAD segments the
 * kernel or gcore wrote), the files that were mapped (NT_FILE), its threads' registers
 * (NT_PRSTATUS), its command (NT_PRPSINFO) and auxiliary vector (NT_AUXV). For ctp-pstack --core
 * and the unwinder (ctp_stackwalk_open_core).
 *
 * A core is untrusted input like a segment: every offset is checked against the file, and a
 * core cut short (a disk that filled, a ulimit -c) is read up to where it ends, with the memory
 * past that end reported as truncated rather than read. */
#ifndef CTP_CORE_FILE_H
#define CTP_CORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/stackwalk.h"

/* One PT_LOAD: memory at [vaddr, vaddr + memsz), of which the first filesz bytes were written
 * into the core at offset. filesz 0: the mapping was not dumped (coredump_filter). */
struct ctp_core_load {
	uint64_t vaddr, memsz, offset, filesz;
};

/* One NT_FILE entry: [start, end) maps `path` from byte file_off. */
struct ctp_core_mapping {
	uint64_t start, end, file_off;
	const char *path; /* as /proc/PID/maps wrote it, " (deleted)" included */
};

struct ctp_core_thread {
	uint32_t tid;
	int signal; /* pr_cursig: the signal it was taking, 0 none */
	struct ctp_regs regs;
};

struct ctp_core {
	int fd;
	void *elf; /* Elf *, kept opaque so that users need no libelf header */
	const uint8_t *raw;
	uint64_t raw_size; /* bytes of the file */
	struct ctp_core_load *loads;
	size_t nloads;
	struct ctp_core_mapping *maps;
	size_t nmaps;
	char *map_names; /* the strings of `maps` */
	struct ctp_core_thread *threads;
	size_t nthreads;
	uint32_t pid, ppid; /* 0 when the core does not say */
	int signal;	    /* the signal that made the core (the first thread's), 0 none */
	char fname[17];	    /* the command's name, from NT_PRPSINFO */
	char psargs[81];    /* the start of its arguments, joined by spaces */
	uint64_t entry;	    /* AT_ENTRY: the executable's entry point, 0 when unknown */
	bool truncated;	    /* some memory written into the core lies past the file's end */
};

enum ctp_core_status {
	CTP_CORE_OK,
	CTP_CORE_CANNOT_OPEN, /* errno says why */
	CTP_CORE_NOT_CORE,    /* not an ELF core of an x86-64 Linux process */
	CTP_CORE_TRUNCATED,   /* a core cut short before the end of its notes */
};

/* Opens and indexes the core at path. On failure the reason is in why. */
enum ctp_core_status ctp_core_open(const char *path, struct ctp_core *out, char *why,
				   size_t why_len);
void ctp_core_close(struct ctp_core *c);

/* Whether a range of the process's memory is in the core. */
enum ctp_core_range {
	CTP_CORE_RANGE_PRESENT,
	CTP_CORE_RANGE_UNMAPPED,   /* no PT_LOAD covers some of it */
	CTP_CORE_RANGE_NOT_DUMPED, /* mapped, but not written into the core (coredump_filter) */
	CTP_CORE_RANGE_TRUNCATED,  /* written past the end of the file: the core was cut short */
};

/* Copies [addr, addr + len) of the process's memory into buf (which may be NULL to only ask). A
 * range may span adjacent PT_LOADs. */
enum ctp_core_range ctp_core_copy(const struct ctp_core *c, uint64_t addr, void *buf, size_t len);

/* ctp_mem_read_fn over a core: arg is the struct ctp_core. */
bool ctp_read_core_memory(void *arg, uint64_t addr, void *buf, size_t len);

/* The NT_FILE mapping holding addr, NULL when none does. */
const struct ctp_core_mapping *ctp_core_mapping_at(const struct ctp_core *c, uint64_t addr);

/* The executable's path: the file mapped at the entry point (AT_ENTRY), NULL when unknown. */
const char *ctp_core_executable(const struct ctp_core *c);

/* The thread tid of the core, NULL when it has none. */
const struct ctp_core_thread *ctp_core_thread(const struct ctp_core *c, uint32_t tid);

#endif

/* Where a snapshot comes from: a running process (locate.c: its memfd, mapped read-only; its
 * memory through process_vm_readv) or a core file (core_source.c: the segment's bytes copied out
 * of the core's memory; the core's memory and threads). The snapshot reads stations, unwinds
 * stacks and takes its clock through this and nothing else, so that both are one code. */
#ifndef CTP_PSTACK_SOURCE_H
#define CTP_PSTACK_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/segment_view.h"
#include "ctp/stackwalk.h"

/* ctp-pstack's exit statuses (docs/ctp-pstack.md, "Exit status"). 3 is left to --report, whose
 * status is ctp-cat's: 3 there means findings, as everywhere in ctp. */
enum pstack_exit {
	PSTACK_EXIT_OK = 0,
	PSTACK_EXIT_NO_PROCESS = 1, /* no such process (or it ended meanwhile), or no such core */
	PSTACK_EXIT_USAGE = 2,
	PSTACK_EXIT_NOT_TRACED = 4,  /* the process, or the core, holds no ctp segment */
	PSTACK_EXIT_DENIED = 5,	     /* not allowed to look at its files, or to read the core */
	PSTACK_EXIT_BAD_SEGMENT = 6, /* a segment, but unreadable or of another version */
	PSTACK_EXIT_OUTPUT = 7,	     /* the output could not be written */
	PSTACK_EXIT_NOT_CORE = 8,    /* --core: the file is not a core file */
	PSTACK_EXIT_NOT_DUMPED = 9,  /* --core: the segment was mapped but left out of the core */
	PSTACK_EXIT_TRUNCATED = 10,  /* --core: the core was cut short before the segment's end */
};

struct ctp_core;

struct pstack_source {
	struct ctp_segment_view view;
	uint32_t pid;
	int memfd;		 /* live: our descriptor of the process's memfd; -1 for a core */
	struct ctp_core *core;	 /* a core file; NULL when live */
	const char *core_path;	 /* as the user named it */
	const char *executable;	 /* core: the program's file (EXE, or the one the core names) */
	int64_t core_written_ns; /* core: when the file was written (its mtime), CLOCK_REALTIME */
};

/* The head of the block list to walk from, the mapping made to cover every block it leads to
 * (see ctp_view_blocks_from): a live process may grow its segment at any time. */
uint64_t pstack_source_head(struct pstack_source *src);

/* ctp_mem_read_fn over the source's process memory: arg is the struct pstack_source. */
bool pstack_source_read(void *src, uint64_t addr, void *buf, size_t len);

/* An unwinder over the source's process (NULL when none can be had). */
struct ctp_stackwalk *pstack_source_open_walk(struct pstack_source *src);

/* The registers of thread tid when the source knows them (a core's NT_PRSTATUS): a running
 * coroutine's stack is its thread's. */
bool pstack_source_thread_regs(const struct pstack_source *src, uint32_t tid, struct ctp_regs *out);

/* The source's "now", in the segment's clock (raw) and CLOCK_MONOTONIC: the moment of the look
 * for a live process; for a core, the moment it was written when that can be known, else the
 * latest switch the stations recorded (`latest_raw`; at_latest_switch tells). */
struct pstack_now {
	uint64_t raw, mono_ns;
	double ns_per_tick; /* 0 when the rate could not be had */
	bool at_latest_switch;
};
void pstack_source_now(const struct pstack_source *src, uint64_t latest_raw,
		       struct pstack_now *out);

void pstack_source_close(struct pstack_source *src);

#endif

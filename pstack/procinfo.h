/* What /proc (or a core file) says of the process, for the views' header and the snapshot
 * trace's `process` line: its executable, arguments and parent. */
#ifndef CTP_PSTACK_PROCINFO_H
#define CTP_PSTACK_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pstack_procinfo {
	char command[512];  /* the arguments joined by spaces, cut to fit */
	char strings[8192]; /* the executable's path, then each argument, NUL-terminated */
	size_t len;	    /* bytes of `strings` used */
	uint32_t argc;	    /* arguments in `strings` after the path */
	uint32_t ppid;	    /* 0 when unknown */
};

/* Reads what it can; what it cannot read stays empty. */
void pstack_procinfo_read(pid_t pid, struct pstack_procinfo *out);

/* The same from a core's NT_PRPSINFO note, which keeps only the first 80 bytes of the
 * arguments, joined by spaces (so an argument with a space in it reads as two). */
struct ctp_core;
void pstack_procinfo_from_core(const struct ctp_core *core, const char *executable,
			       struct pstack_procinfo *out);

#endif

/* Finding a running process's segment from outside it: the preload keeps the segment in a memfd
 * that the process holds open, so /proc/PID/fd leads to it, whether the process runs under
 * ctp-run or under a plain LD_PRELOAD. The file is mapped read-only: ctp-pstack never writes a
 * byte of the process's memory, and never stops it. */
#ifndef CTP_PSTACK_LOCATE_H
#define CTP_PSTACK_LOCATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pstack/source.h"

/* Finds and maps the segment of process `pid`. Returns PSTACK_EXIT_OK, or another status with a
 * message for the user in `why`. */
enum pstack_exit pstack_locate(pid_t pid, struct pstack_source *out, char *why, size_t why_len);

/* pstack_source_head of a live process: the head is loaded first, so the size loaded after it
 * covers that head's blocks, and the file is mapped again when it has grown past the mapping. */
uint64_t pstack_live_head(struct pstack_source *src);

/* Unmaps and closes what pstack_locate opened. */
void pstack_live_close(struct pstack_source *src);

#endif

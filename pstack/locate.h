/* Finding a running process's segment from outside it: the preload keeps the segment in a memfd
 * that the process holds open, so /proc/PID/fd leads to it, whether the process runs under
 * ctp-run or under a plain LD_PRELOAD. The file is mapped read-only: ctp-pstack never writes a
 * byte of the process's memory, and never stops it. */
#ifndef CTP_PSTACK_LOCATE_H
#define CTP_PSTACK_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctp/segment_view.h"

/* ctp-pstack's exit statuses (docs/ctp-pstack.md, "Exit status"). 3 is left to --report, whose
 * status is ctp-cat's: 3 there means findings, as everywhere in ctp. */
enum pstack_exit {
	PSTACK_EXIT_OK = 0,
	PSTACK_EXIT_NO_PROCESS = 1, /* no such process (or it ended meanwhile) */
	PSTACK_EXIT_USAGE = 2,
	PSTACK_EXIT_NOT_TRACED = 4,  /* the process holds no ctp segment */
	PSTACK_EXIT_DENIED = 5,	     /* not allowed to look at its files */
	PSTACK_EXIT_BAD_SEGMENT = 6, /* a segment, but unreadable or of another version */
	PSTACK_EXIT_OUTPUT = 7,	     /* the output could not be written */
};

struct pstack_segment {
	int fd; /* our own descriptor of the process's memfd */
	struct ctp_segment_view view;
};

/* Finds and maps the segment of process `pid`. Returns PSTACK_EXIT_OK, or another status with a
 * message for the user in `why`. */
enum pstack_exit pstack_locate(pid_t pid, struct pstack_segment *out, char *why, size_t why_len);

/* Makes sure the mapping covers every block published so far and returns the head of the block
 * list to walk from (see ctp_view_blocks_from). The process may grow its segment at any time;
 * the head is loaded first, so the size loaded after it covers that head's blocks. */
uint64_t pstack_segment_head(struct pstack_segment *seg);

void pstack_segment_close(struct pstack_segment *seg);

#endif

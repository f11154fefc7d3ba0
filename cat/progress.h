/* Progress of a long read, on a terminal only: lines read, how much of the file, and the rate,
 * rewritten in place on stderr about twice a second, and cleared at the end. Nothing at all when
 * stderr is not a terminal (a pipe, a file, a test), or when the input is not a regular file
 * whose size is known. */
#ifndef CTP_CAT_PROGRESS_H
#define CTP_CAT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "cat/reader/trace_reader.h"

struct ctp_cat_progress {
	bool on;
	const char *name;
	uint64_t size; /* of the input file */
	double start, last;
	bool shown;
};

void ctp_cat_progress_start(struct ctp_cat_progress *p, const char *path, const char *name);

/* After line `lines`: redraws when it is time. Cheap when it is not. */
void ctp_cat_progress_tick(struct ctp_cat_progress *p, const struct ctp_trace_reader *r,
			   uint64_t lines);

/* Clears what was shown. */
void ctp_cat_progress_end(struct ctp_cat_progress *p);

#endif

/* What the streaming views (text, CSV, coroTracer, Chrome, JSON Lines) share: the stream they
 * write, fully buffered unless it is a terminal, the names they show (cat/model/names.h), and
 * the open, finish and free around them, so that each format's file holds only its format. */
#ifndef CTP_CAT_OUTPUTS_VIEW_H
#define CTP_CAT_OUTPUTS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cat/model/names.h"

struct ctp_cat_view {
	FILE *f;
	struct ctp_cat_names *names; /* NULL for a view that names nothing */
};

/* A zeroed state of `size` bytes whose first member is a struct ctp_cat_view writing to `f`,
 * with names when `with_names`. NULL when out of memory (nothing is written to `f`). */
void *ctp_cat_view_new(size_t size, FILE *f, bool with_names);

/* Flushes the stream: a view's `finish` when it has nothing more to write. 0, or -1. */
int ctp_cat_view_finish(void *state);

/* Frees the names and the state (a view frees its own parts first). */
void ctp_cat_view_free(void *state);

#endif

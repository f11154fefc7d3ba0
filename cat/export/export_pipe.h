/* Rows handed to a second thread: reading and parsing the trace costs about as much as SQLite's
 * insert, so doing both at once nearly halves an export. Rows are copied into chunks (their
 * text points into a trace line that the next line replaces); at most a few chunks are in
 * flight, so memory stays bounded. */
#ifndef CTP_CAT_EXPORT_PIPE_H
#define CTP_CAT_EXPORT_PIPE_H

#include "cat/export/export.h"

/* Called on the pipe's thread, row by row in order; returns 0, or -1 to stop the pipe (the
 * consumer keeps its own reason). */
typedef int (*ctp_export_consume_fn)(void *ctx, enum ctp_export_table table,
				     const struct ctp_export_value *values);

struct ctp_export_pipe;

/* NULL when out of memory or no thread could be made (errno set). */
struct ctp_export_pipe *ctp_export_pipe_start(ctp_export_consume_fn consume, void *ctx);

/* Queues one row; -1 when out of memory (errno ENOMEM) or the consumer has failed (errno
 * ECANCELED). */
int ctp_export_pipe_row(struct ctp_export_pipe *p, enum ctp_export_table table,
			const struct ctp_export_value *values);

/* Waits until every queued row has been consumed; -1 (errno ECANCELED) when the consumer
 * failed. The consumer's state may then be used on the calling thread until the next row. */
int ctp_export_pipe_drain(struct ctp_export_pipe *p);

/* Drops what is queued, ends the thread, frees the pipe. */
void ctp_export_pipe_stop(struct ctp_export_pipe *p);

#endif

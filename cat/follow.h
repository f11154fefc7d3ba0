/* --follow: reading a trace that is still being written, like `tail -f`. A thread copies the
 * file's bytes into a pipe as they appear and the ordinary trace reader reads the pipe, so the
 * reader needs no notion of "wait for more". Following ends when
 *   - the trace's `end` line arrives (the caller stops reading at it),
 *   - no process has the file open for writing any more and all of it was copied (the writer
 *     is gone; told by a read lease, which the kernel grants only then),
 *   - or on SIGINT/SIGTERM.
 * Between writes the thread sleeps in poll() on inotify (or a 200 ms timeout): no busy loop. */
#ifndef CTP_CAT_FOLLOW_H
#define CTP_CAT_FOLLOW_H

#include <stdbool.h>
#include <stdio.h>

#include "cat/reader/trace_reader.h"

struct ctp_cat_follow;

/* Starts following `path` (waiting for it to appear if it does not exist yet) and returns a
 * reader of it; *out is the follower to close after the reader is freed. NULL with errno set on
 * failure. Installs handlers for SIGINT and SIGTERM. */
struct ctp_trace_reader *ctp_cat_follow_open(const char *path, struct ctp_cat_follow **out);

/* Flushes `f` when no more bytes wait in the pipe, so that what was read shows without delay
 * while a big backlog still goes out in large writes. */
void ctp_cat_follow_flush_if_idle(const struct ctp_cat_follow *fl, FILE *f);

/* Whether following was ended by SIGINT or SIGTERM. */
bool ctp_cat_follow_interrupted(void);

/* Stops the thread and frees the follower; call after freeing the reader. */
void ctp_cat_follow_close(struct ctp_cat_follow *fl);

#endif

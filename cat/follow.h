/* --follow: reading a trace that is still being written, like `tail -f`. A thread copies the
 * file's bytes into a pipe as they appear and the ordinary trace reader reads the pipe, so the
 * reader needs no notion of "wait for more". Following ends when
 *   - the trace's `end` line arrives (the caller stops reading at it),
 *   - no process has the file open for writing any more and all of it was copied (the writer
 *     is gone; told by a read lease, which the kernel grants only then),
 *   - or on SIGINT/SIGTERM.
 * Between writes the thread sleeps in poll() on inotify (or a 200 ms timeout): no busy loop.
 * The same thread asks for snapshots at set times (--snapshot-every). */
#ifndef CTP_CAT_FOLLOW_H
#define CTP_CAT_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "cat/reader/trace_reader.h"

struct ctp_cat_follow;

/* Starts following `path` (waiting for it to appear if it does not exist yet) and returns a
 * reader of it; *out is the follower to close after the reader is freed. NULL with errno set on
 * failure. Installs handlers for SIGINT and SIGTERM. With snapshot_every_ns (0: never), the
 * thread also asks the collector writing the trace for a snapshot (cat/snapshot_request.h) as
 * soon as the file is there and then every snapshot_every_ns. */
struct ctp_trace_reader *ctp_cat_follow_open(const char *path, uint64_t snapshot_every_ns,
					     struct ctp_cat_follow **out);

/* Whether no bytes wait in the pipe: the caller flushes its output then, so that what was read
 * shows without delay while a big backlog still goes out in large writes. */
bool ctp_cat_follow_idle(const struct ctp_cat_follow *fl);

/* Whether following was ended by SIGINT or SIGTERM. */
bool ctp_cat_follow_interrupted(void);

/* Stops the thread and frees the follower; call after freeing the reader. */
void ctp_cat_follow_close(struct ctp_cat_follow *fl);

#endif

/* Creates the file a trace is written to. A trace holds the traced programs' arguments and
 * paths, and its name is often predictable (trace.jsonl.zst, ctp-PID.jsonl.zst) in a directory
 * others may write to, so:
 *   - a symbolic link at the path is refused, never written through (it could point anywhere);
 *   - an existing regular file is kept as PATH.old (renamed, which replaces an old PATH.old);
 *   - the new file is created exclusively (O_EXCL: nothing may slip in between) with mode 0600;
 *   - a path that is neither (a device such as /dev/null, a FIFO) is opened as it is, for
 *     writing, never created, truncated or moved. */
#ifndef CTP_TRACE_FILE_H
#define CTP_TRACE_FILE_H

#include <stddef.h>

/* Returns a file descriptor open for writing (close-on-exec), or -1 with errno set and a
 * message for people in `why`. */
int ctp_trace_file_create(const char *path, char *why, size_t why_size);

#endif

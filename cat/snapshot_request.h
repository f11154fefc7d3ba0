/* Asking a trace being written for a snapshot (docs/ctp-cat.md, "Live reports"): the collector
 * writes one on SIGUSR1 (docs/trace-format.md, `snapshot`). The trace file is the one name a
 * user has for every way of tracing (ctp-run, or plain LD_PRELOAD whose collector has no
 * launcher), so the collector is found from it: the ctp-collector process that has the file
 * open for writing. Not through ctp-run, which passes SIGUSR1 on to the traced program, whose
 * signal it may be. */
#ifndef CTP_CAT_SNAPSHOT_REQUEST_H
#define CTP_CAT_SNAPSHOT_REQUEST_H

#include <sys/types.h>

/* Sends SIGUSR1 to the ctp-collector writing `path`. Returns its pid, or -1 with errno set:
 * ESRCH when no ctp-collector has the file open for writing (it finished, or another user's
 * /proc cannot be seen), EPERM when it belongs to another user, or what stat(2) says of the
 * path. */
pid_t ctp_cat_request_snapshot(const char *path);

#endif

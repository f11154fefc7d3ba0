/* The connection to the collector (connection.c): the hello with the segment's fd, the wakeup
 * byte, and the notices of an exec and of the processes it started, which tell a collector that
 * has seen every traced process go whether one may still come. */
#ifndef CTP_PRELOAD_CONNECTION_H
#define CTP_PRELOAD_CONNECTION_H

#include <stdbool.h>

#include "preload/compiler.h"

CTP_HIDDEN bool ctp_connection_open(void);
/* When this image will not trace: closes a connection an exec handed to it, and removes
 * CTP_CONNECTION_FD, so that neither stays in the program. */
CTP_HIDDEN void ctp_connection_discard_handover(void);
/* The variable that hands a connection across an exec (ctp_connection_for_exec). */
#define CTP_CONNECTION_FD_VAR "CTP_CONNECTION_FD"
/* Before an exec (or posix_spawn) of an image, in the process itself or in its vfork child: a
 * connection for the new image, made as a fork child's is (CTP_MSG_CONNECT), at a high fd left
 * open across the exec, which CTP_CONNECTION_FD names to the new image; when the image could
 * not reach the collector's socket by its path (the process changed its user since tracing
 * began, or its root), or when this process's own connection was passed over another (which
 * keeps the images in order). -1 when the path will do, when the image will not load the
 * preload (`loads_preload` false: exec_target.h), or on failure. ctp_connection_exec_failed(fd)
 * closes it when the exec failed. */
CTP_HIDDEN int ctp_connection_for_exec(bool loads_preload);
CTP_HIDDEN void ctp_connection_exec_failed(int fd);
CTP_HIDDEN void ctp_connection_wake(void);
CTP_HIDDEN void ctp_connection_send_exec(void);
/* In the parent of a fork. */
CTP_HIDDEN void ctp_connection_send_forked(void);
/* In the parent of a posix_spawn or vfork that made process `pid`. */
CTP_HIDDEN void ctp_connection_send_spawned(int pid);

#endif

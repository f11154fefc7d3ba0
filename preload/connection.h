/* The connection to the collector (connection.c): the hello with the segment's fd, the wakeup
 * byte, and the notices of an exec and of the processes it started, which tell a collector that
 * has seen every traced process go whether one may still come. */
#ifndef CTP_PRELOAD_CONNECTION_H
#define CTP_PRELOAD_CONNECTION_H

#include <stdbool.h>

#include "preload/compiler.h"

CTP_HIDDEN bool ctp_connection_open(void);
CTP_HIDDEN void ctp_connection_wake(void);
CTP_HIDDEN void ctp_connection_send_exec(void);
/* In the parent of a fork. */
CTP_HIDDEN void ctp_connection_send_forked(void);
/* In the parent of a posix_spawn or vfork that made process `pid`. */
CTP_HIDDEN void ctp_connection_send_spawned(int pid);

#endif

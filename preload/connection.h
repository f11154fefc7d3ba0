/* The connection to the collector (connection.c): the hello with the segment's fd, the wakeup
 * byte, and the notice of an exec. */
#ifndef CTP_PRELOAD_CONNECTION_H
#define CTP_PRELOAD_CONNECTION_H

#include <stdbool.h>

#include "preload/compiler.h"

CTP_HIDDEN bool ctp_connection_open(void);
CTP_HIDDEN void ctp_connection_wake(void);
CTP_HIDDEN void ctp_connection_send_exec(void);

#endif

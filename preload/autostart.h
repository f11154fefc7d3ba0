/* The plain LD_PRELOAD form (autostart.c). */
#ifndef CTP_PRELOAD_AUTOSTART_H
#define CTP_PRELOAD_AUTOSTART_H

#include <stdbool.h>

#include "preload/compiler.h"

/* Starts a collector of the process's own when CTP_SOCKET is not set. */
CTP_HIDDEN bool ctp_autostart_collector(void);

#endif

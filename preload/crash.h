/* Process end (crash.c): fault handlers and the exit status. The stack the handlers run on
 * is signal_stack.c's. */
#ifndef CTP_PRELOAD_CRASH_H
#define CTP_PRELOAD_CRASH_H

#include "preload/compiler.h"
#include "preload/threads.h"

CTP_HIDDEN void ctp_crash_handlers_install(void);
/* Records the exit status at exit, also when main returns (glibc's exit is then not called
 * through the PLT, so the exit hooks alone would miss it). */
CTP_HIDDEN void ctp_exit_status_watch(void);

#endif

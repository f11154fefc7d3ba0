/* The module table in the segment (modules.c): every loaded object, so that the collector can
 * symbolize after the process is gone. */
#ifndef CTP_PRELOAD_MODULES_H
#define CTP_PRELOAD_MODULES_H

#include "preload/compiler.h"

/* Brings the module table up to date if objects were loaded since it last was. */
CTP_HIDDEN void ctp_modules_scan(void);
CTP_HIDDEN void ctp_modules_fork_child(void);

#endif

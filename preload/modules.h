/* The module table in the segment (modules.c): every loaded object, so that the collector can
 * symbolize after the process is gone. */
#ifndef CTP_PRELOAD_MODULES_H
#define CTP_PRELOAD_MODULES_H

#include <stdint.h>

#include "preload/compiler.h"

/* Brings the module table up to date if objects were loaded since it last was. */
CTP_HIDDEN void ctp_modules_scan(void);
/* Makes sure the table holds the module of code at addr (a coroutine's entry function): a scan
 * only when addr is outside the module the last such call found. */
CTP_HIDDEN void ctp_modules_note_code(uint64_t addr);
CTP_HIDDEN void ctp_modules_fork_child(void);

#endif

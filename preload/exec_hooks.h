/* Children (exec_hooks.c): what a child's environment needs to be traced too. */
#ifndef CTP_PRELOAD_EXEC_HOOKS_H
#define CTP_PRELOAD_EXEC_HOOKS_H

#include "preload/compiler.h"

/* Keeps the CTP_* variables and the preload's path for children's environments. */
CTP_HIDDEN void ctp_exec_remember_environment(void);

#endif

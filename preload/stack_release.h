/* The free() hook (stack_release.c) and what it needs from the preload's start. */
#ifndef CTP_PRELOAD_STACK_RELEASE_H
#define CTP_PRELOAD_STACK_RELEASE_H

#include "preload/compiler.h"

/* Finds the real free now, if no free has yet. */
CTP_HIDDEN void ctp_free_resolve(void);

#endif

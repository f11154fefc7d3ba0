/* The stand-in signal stack the preload gives each thread without one (signal_stack.c). */
#ifndef CTP_PRELOAD_SIGNAL_STACK_H
#define CTP_PRELOAD_SIGNAL_STACK_H

#include "preload/compiler.h"
#include "preload/threads.h"

CTP_HIDDEN void ctp_signal_stack_for_thread(struct ctp_thread *t);
CTP_HIDDEN void ctp_signal_stack_release(struct ctp_thread *t);
/* Called by the sigaction hook when the program installs a handler with SA_ONSTACK. */
CTP_HIDDEN void ctp_signal_stack_onstack(void);

#endif

/* Calls that take the dynamic loader's dl_iterate_phdr lock, kept out of a fork (fork_guard.c).
 * glibc's fork resets the loader's dlopen lock in the child, not the lock dl_iterate_phdr takes:
 * a child forked while another thread was inside dl_iterate_phdr waits forever in its first
 * one. The program's own threads may do that; the tracer's must not add the hazard. So each call
 * of ours that may take that lock (a module scan, a lookup of a real function by its caller's
 * scope, a stack walk, in which libunwind finds unwind tables that way) runs inside a guard,
 * and a fork first waits for the guards under way to end and keeps new ones out until done. */
#ifndef CTP_PRELOAD_FORK_GUARD_H
#define CTP_PRELOAD_FORK_GUARD_H

#include <stdbool.h>

#include "preload/compiler.h"

/* Enters a guard; false (nothing entered) while a fork is under way: for calls that can be
 * skipped (a walk, a scan). */
CTP_HIDDEN bool ctp_fork_guard_try_enter(void);
/* Enters a guard, waiting out a fork under way: for calls that cannot be skipped. */
CTP_HIDDEN void ctp_fork_guard_enter(void);
CTP_HIDDEN void ctp_fork_guard_leave(void);

/* How many guards this thread holds. */
CTP_HIDDEN int ctp_fork_guard_held(void);

/* pthread_atfork: before the fork, after it in the parent, and in the child. */
CTP_HIDDEN void ctp_fork_guard_prepare(void);
CTP_HIDDEN void ctp_fork_guard_parent(void);
CTP_HIDDEN void ctp_fork_guard_child(void);

#endif

/* How a process ends, as far as it can tell: the exit status through the exit calls, and for a
 * fault (SEGV, BUS, ILL, FPE, ABRT), which thread and coroutine took it and where.
 *
 * Do no harm: handlers exist only for those five fault signals, and only where the program left
 * the default action. A signal that is not a fault (SIGINT from a terminal, SIGTERM, SIGTRAP,
 * seccomp's SIGSYS...) is never touched, so it reaches the program exactly as untraced. After
 * recording, the handler puts the default action back and lets the fault happen again (or sends
 * the signal again when it was sent, not raised by an instruction), so the process dies of the
 * same signal with the same core. A program that installs a handler of its own replaces ours;
 * the sigaction hook keeps ours out of the program's sight (it reads back what it would have
 * read untraced). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/crash.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/segment.h"
#include "preload/signal_stack.h"
#include "preload/stations.h"
#include "preload/threads.h"
#include "preload/unwind.h"

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
enum { FAULT_SIGNALS = sizeof(fault_signals) / sizeof(fault_signals[0]) };

/* Which fault signals carry our handler right now (bit = signal number). */
static uint64_t ours_installed;

/* Resolved before any handler is installed: a handler must not call dlsym. */
static int (*real_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static bool is_fault_signal(int sig)
{
	for (int i = 0; i < FAULT_SIGNALS; i++)
		if (fault_signals[i] == sig)
			return true;
	return false;
}

/* Whether this process is the one the segment belongs to: a vfork child shares our memory and
 * must not record its own end as ours. */
static bool own_process(void)
{
	return (uint32_t)syscall(SYS_getpid) == ctp_proc.pid;
}

static void record_exit(uint32_t kind, int value)
{
	struct ctp_header *h = ctp_seg.hdr;
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING ||
	    CTP_LOAD_RELAXED(&h->exit_kind) != CTP_EXIT_NONE || ctp_in_vfork_child() ||
	    !own_process())
		return;
	h->exit_value = value;
	h->exit_ts = ctp_now(); /* what was left suspended waited until now */
	CTP_STORE_RELEASE(&h->exit_kind, kind);
}

/* si_code > 0 means the kernel raised the signal for an instruction (a fault): its si_addr is
 * the faulting address, and returning re-executes the instruction. Anything else was sent. */
static bool raised_by_fault(const siginfo_t *info)
{
	return info->si_code > 0 && info->si_code != SI_KERNEL;
}

static void on_fault_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	int saved_errno = errno;
	struct ctp_header *h = ctp_seg.hdr;
	/* The thread as it is, busy or not: the fault may be in the tracer's own code. */
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING && t->state != CTP_THREAD_BUSY)
		t = NULL;
	if (h && __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING &&
	    !ctp_in_vfork_child() && own_process()) {
		h->crash_tid = (uint32_t)syscall(SYS_gettid);
		h->crash_coro = t && t->current != CTP_NO_STATION
					? CTP_LOAD_RELAXED(&ctp_station_at(t->current)->coro)
					: 0;
		h->crash_addr = raised_by_fault(info) ? (uint64_t)info->si_addr : 0;
		record_exit(CTP_EXIT_SIGNAL, sig);
	}
	/* The default action again, then the same signal: a fault re-executes the instruction and
	 * dies of it; a signal that was sent (abort, kill) is sent again. Blocked until this
	 * handler returns, so that it is delivered with the mask the program had. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	real_sigaction_fn(sig, &dfl, NULL);
	__atomic_fetch_and(&ours_installed, ~(1ull << sig), __ATOMIC_RELAXED);
	if (!raised_by_fault(info) || sig == SIGABRT)
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	errno = saved_errno;
}

void ctp_crash_handlers_install(void)
{
	CTP_REAL(sigaction);
	real_sigaction_fn = real_sigaction;
	for (int i = 0; i < FAULT_SIGNALS; i++) {
		int sig = fault_signals[i];
		struct sigaction old;
		if (real_sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = {.sa_sigaction = on_fault_signal,
				       .sa_flags = SA_SIGINFO | SA_ONSTACK};
		sigemptyset(&sa.sa_mask);
		if (real_sigaction(sig, &sa, NULL) == 0)
			__atomic_fetch_or(&ours_installed, 1ull << sig, __ATOMIC_RELAXED);
	}
}

/* The program asks for, or changes, a signal's action. Where ours stands in for the default,
 * the program reads back the default, as it would untraced; once it installs its own, ours is
 * gone for good. A handler of the program's with SA_ONSTACK would run on the preload's signal
 * stack, which is then made large enough (signal_stack.c). */
CTP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	CTP_REAL(sigaction);
	int saved_errno = errno;
	bool was_ours = sig > 0 && sig < 64 && is_fault_signal(sig) &&
			(__atomic_load_n(&ours_installed, __ATOMIC_RELAXED) & (1ull << sig));
	int rc = real_sigaction(sig, act, oldact);
	if (rc == 0 && act && (act->sa_flags & SA_ONSTACK) && act->sa_handler != SIG_DFL &&
	    act->sa_handler != SIG_IGN) {
		ctp_signal_stack_onstack();
		errno = saved_errno;
	}
	if (rc != 0 || !was_ours)
		return rc;
	if (oldact && oldact->sa_sigaction == on_fault_signal) {
		memset(oldact, 0, sizeof(*oldact));
		oldact->sa_handler = SIG_DFL;
		sigemptyset(&oldact->sa_mask);
	}
	if (act)
		__atomic_fetch_and(&ours_installed, ~(1ull << sig), __ATOMIC_RELAXED);
	errno = saved_errno;
	return rc;
}

/* glibc's signal() sets the action without going through the sigaction hook. */
CTP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	CTP_REAL(signal);
	sighandler_t old = real_signal(sig, handler);
	if ((void *)old == (void *)on_fault_signal) {
		__atomic_fetch_and(&ours_installed, ~(1ull << sig), __ATOMIC_RELAXED);
		return SIG_DFL;
	}
	return old;
}

/* Coroutines still suspended at the end get their whole stacks now, while their memory exists
 * (unwind_saved.c). Not for faults: a walk could need the loader's lock that the faulting code
 * may hold. */
static void unwind_suspended(void)
{
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING &&
	    !ctp_in_vfork_child() && own_process())
		ctp_unwind_suspended_at_exit();
}

static void record_status_at_exit(int status, void *arg)
{
	(void)arg;
	if (!ctp_in_vfork_child() && own_process())
		ctp_modules_scan(); /* the last look: the collector symbolizes after the end */
	unwind_suspended();
	record_exit(CTP_EXIT_STATUS, status);
}

void ctp_exit_status_watch(void)
{
	on_exit(record_status_at_exit, NULL);
}

CTP_EXPORT void exit(int status)
{
	CTP_REAL(exit);
	record_exit(CTP_EXIT_STATUS, status);
	real_exit(status);
	__builtin_unreachable();
}

CTP_EXPORT void _exit(int status)
{
	CTP_REAL(_exit);
	unwind_suspended();
	record_exit(CTP_EXIT_STATUS, status);
	real__exit(status);
	__builtin_unreachable();
}

CTP_EXPORT void _Exit(int status)
{
	CTP_REAL(_Exit);
	unwind_suspended();
	record_exit(CTP_EXIT_STATUS, status);
	real__Exit(status);
	__builtin_unreachable();
}

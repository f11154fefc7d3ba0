/* How a process ends, as far as it can tell: exit status through the exit calls, and for a
 * fatal signal, which thread and coroutine took it. The handlers are installed only where the
 * program left the default action, and put it back before the signal is delivered again, so the
 * program dies exactly as it would have (same signal, same core). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "preload.h"
#include "real.h"

/* Signals whose default action ends the process and that a program commonly dies of. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE, SIGABRT,
				    SIGTRAP, SIGSYS, SIGTERM, SIGINT, SIGHUP};
enum { ALTSTACK_SIZE = 64 * 1024 };

static void record_exit(uint32_t kind, int value)
{
	struct ctp_header *h = ctp_seg.hdr;
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING ||
	    CTP_LOAD_RELAXED(&h->exit_kind) != CTP_EXIT_NONE)
		return;
	h->exit_value = value;
	CTP_STORE_RELEASE(&h->exit_kind, kind);
}

static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	struct ctp_header *h = ctp_seg.hdr;
	struct ctp_thread *t = ctp_thread_get();
	if (h && __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING) {
		h->crash_tid = (uint32_t)syscall(SYS_gettid);
		h->crash_coro = t && t->current != CTP_NO_STATION
					? CTP_LOAD_RELAXED(&ctp_station_at(t->current)->coro)
					: 0;
		h->crash_addr = (uint64_t)info->si_addr;
		record_exit(CTP_EXIT_SIGNAL, sig);
	}
	/* Default action again; a fault re-executes the instruction and dies of it, a signal
	 * that was sent is sent again. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (info->si_code <= 0 || sig == SIGABRT)
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

void ctp_crash_handlers_install(void)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;
		if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = {.sa_sigaction = on_fatal_signal,
				       .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

void ctp_crash_altstack_for_thread(void)
{
	/* A coroutine that overflows its stack can only be reported from another stack. Only where
	 * the program has none of its own. */
	stack_t old;
	if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
		return;
	void *p = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (p == MAP_FAILED)
		return;
	stack_t ss = {.ss_sp = p, .ss_size = ALTSTACK_SIZE};
	if (sigaltstack(&ss, NULL) != 0)
		munmap(p, ALTSTACK_SIZE);
}

static void record_status_at_exit(int status, void *arg)
{
	(void)arg;
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
	record_exit(CTP_EXIT_STATUS, status);
	real__exit(status);
	__builtin_unreachable();
}

CTP_EXPORT void _Exit(int status)
{
	CTP_REAL(_Exit);
	record_exit(CTP_EXIT_STATUS, status);
	real__Exit(status);
	__builtin_unreachable();
}

/* libdw's failures, turned into answers. Out of memory, libdw ends the process: its default
 * handler calls error(EXIT_FAILURE), which under an address-space limit (ulimit -v) ended the
 * collector and the rest of the trace with it. And in a few places it dereferences an
 * allocation it did not check (under Debian 12's, the abbreviation table of a unit whose calloc
 * failed): SIGSEGV; or asserts that it did not fail (the resizing of a hash table): SIGABRT. A
 * lookup guarded here jumps back out of libdw in each case, and the Dwarf it was reading is
 * lost: libdw may have been midway through an update of it, so it is never read or ended
 * again. The signals caught are SIGSEGV, SIGBUS (a debug file cut short while mapped) and the
 * SIGABRT of abort() (glibc's abort lets a handler jump out of it), in the thread of a guarded
 * lookup, raised by its own code, and only while the lookup runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctp/symbolize_internal.h"

static __thread sigjmp_buf *escape; /* the guarded lookup of this thread, NULL outside one */

static void __attribute__((noreturn)) out_of_memory(void)
{
	if (escape == NULL) { /* a guarded Dwarf read outside a guarded lookup: libdw's own end */
		fputs("libdw: Cannot allocate memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	siglongjmp(*escape, CTP_DWARF_OUT_OF_MEMORY);
}

Dwarf *ctp_dwarf_guard(Dwarf *d)
{
	if (d != NULL)
		dwarf_new_oom_handler(d, out_of_memory);
	return d;
}

/* The fault handler is the process's, set at the first guarded lookup and kept: outside one, a
 * fault puts the action there was before back and happens again under it, as without us. (Set
 * and put back around each lookup, it cost four system calls a new address.) */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGABRT};
enum { FAULT_SIGNALS = sizeof(fault_signals) / sizeof(fault_signals[0]) };
static struct sigaction before[FAULT_SIGNALS];
static pthread_once_t faults_once = PTHREAD_ONCE_INIT;

/* Whether the thread's own code raised sig: a fault, or an abort() (libdw's assertions). One
 * sent from outside (kill) is not libdw's, and gets the action it would have had. */
static bool raised_here(int sig, const siginfo_t *info)
{
	if (sig == SIGABRT)
		return info->si_code == SI_TKILL && info->si_pid == getpid();
	return info->si_code > 0;
}

static void on_fault(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	if (escape != NULL && raised_here(sig, info))
		siglongjmp(*escape, CTP_DWARF_FAULT);
	/* Not a guarded lookup's: the action before, for this one and every one after it. A fault
	 * happens again once the handler returns; a signal sent (an abort() too) is sent again. */
	for (int i = 0; i < FAULT_SIGNALS; i++)
		if (fault_signals[i] == sig)
			sigaction(sig, &before[i], NULL);
	if (sig == SIGABRT || info->si_code <= 0)
		raise(sig);
}

static void catch_faults(void)
{
	/* SA_NODEFER: the jump out skips the handler's return, which would unblock the signal. */
	struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < FAULT_SIGNALS; i++)
		sigaction(fault_signals[i], &sa, &before[i]);
}

enum ctp_dwarf_answer ctp_dwarf_line_guarded(Dwarf *dbg, uint64_t vaddr, const char **file,
					     int *line)
{
	pthread_once(&faults_once, catch_faults);
	sigjmp_buf here;
	sigjmp_buf *outer = escape;
	int failed = sigsetjmp(here, 0);
	if (failed == 0) {
		escape = &here;
		failed = ctp_dwarf_line(dbg, vaddr, file, line) ? CTP_DWARF_FOUND
								: CTP_DWARF_NOT_COVERED;
	}
	escape = outer;
	return (enum ctp_dwarf_answer)failed;
}

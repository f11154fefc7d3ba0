/* The stand-in signal stack: a coroutine that overflows its stack can only be reported from
 * another stack, so the preload gives every thread that has none of its own a signal stack
 * (sigaltstack) for its fault handlers (crash.c), and keeps it out of the program's sight.
 *
 * Do no harm: the kernel runs every SA_ONSTACK handler on the thread's signal stack, the
 * program's own too. Untraced, where the thread has none, such a handler runs on the thread's
 * stack and may use as much of it as code there may. So once the program installs one, the
 * stand-in is as large as the thread's stack: reserved (MAP_NORESERVE), not committed, with a
 * guard page below, so that only the pages a handler touches cost memory and a handler that
 * runs off its end faults as it would at the end of the thread's stack. Before that it stays
 * small: 200 threads of 8 MiB stacks would reserve 1.6 GB of address space for nothing. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/compiler.h"
#include "preload/signal_stack.h"
#include "preload/threads.h"

/* The least signal stack the preload sets, and the most it reserves. */
enum { SMALL_SIZE = 64 * 1024 };
#define LARGEST_SIZE ((size_t)64 << 20)

/* Set once the program has installed a handler with SA_ONSTACK (ctp_signal_stack_onstack). */
static bool onstack_handlers;

/* sigaltstack(2) itself: glibc's is the bare system call, and the preload's own calls must not
 * reach the hook below. */
static int altstack_syscall(const stack_t *ss, stack_t *old)
{
	return (int)syscall(SYS_sigaltstack, ss, old);
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Whether strict overcommit (vm.overcommit_memory = 2) is set, read once: the file is opened
 * with a raw system call, and its fd takes the lowest free number while it is open, which a
 * thread of the program opening a file at that moment would otherwise have had. So it is read
 * when the program installs its first SA_ONSTACK handler (ctp_signal_stack_onstack), not at
 * every thread's start (transparency_thread_start_fds). */
static bool overcommit_strict(void)
{
	static int strict = -1; /* not read yet */
	int known = __atomic_load_n(&strict, __ATOMIC_RELAXED);
	if (known >= 0)
		return known;
	char mode = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/sys/vm/overcommit_memory",
			      O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? syscall(SYS_read, fd, &mode, 1) : -1;
	if (fd >= 0)
		syscall(SYS_close, fd);
	known = n != 1 || mode == '2'; /* unreadable: taken as strict */
	__atomic_store_n(&strict, known, __ATOMIC_RELAXED);
	return known;
}

/* Whether a reservation of address space costs the program nothing it budgets: not where an
 * address-space limit is set (it counts there), nor under strict overcommit (mode 2 ignores
 * MAP_NORESERVE and charges the whole mapping). */
static bool reserving_is_free(void)
{
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY)
		return false;
	return !overcommit_strict();
}

static size_t wanted_size(const struct ctp_thread *t)
{
	if (!__atomic_load_n(&onstack_handlers, __ATOMIC_RELAXED) || !reserving_is_free())
		return SMALL_SIZE;
	size_t size = t->stack_hi - t->stack_lo;
	if (size < SMALL_SIZE)
		return SMALL_SIZE;
	size = size > LARGEST_SIZE ? LARGEST_SIZE : size;
	return (size + page_size() - 1) & ~(page_size() - 1);
}

/* Only where the program has none of its own; given back at thread exit. */
void ctp_signal_stack_for_thread(struct ctp_thread *t)
{
	stack_t old;
	if (altstack_syscall(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
		return;
	size_t page = page_size(), size = wanted_size(t);
	char *p = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;
	stack_t ss = {.ss_sp = p + page, .ss_size = size};
	if (mprotect(p, page, PROT_NONE) != 0 || altstack_syscall(&ss, NULL) != 0) {
		munmap(p, size + page);
		return;
	}
	t->altstack = p + page;
	t->altstack_size = size;
}

static void unmap(struct ctp_thread *t)
{
	munmap((char *)t->altstack - page_size(), t->altstack_size + page_size());
	t->altstack = NULL;
}

/* Whether the thread's signal stack is still the preload's and not in use: the program may
 * have put its own, and a handler may be running on it. */
static bool ours_and_idle(const struct ctp_thread *t)
{
	stack_t cur;
	return t->altstack && altstack_syscall(NULL, &cur) == 0 && cur.ss_sp == t->altstack &&
	       !(cur.ss_flags & SS_ONSTACK);
}

void ctp_signal_stack_release(struct ctp_thread *t)
{
	if (!t->altstack)
		return;
	if (ours_and_idle(t)) {
		stack_t off = {.ss_flags = SS_DISABLE};
		if (altstack_syscall(&off, NULL) == 0)
			unmap(t);
	}
	t->altstack = NULL;
}

/* The program installed a handler with SA_ONSTACK: threads started from now on get a large
 * stand-in, and so does the installing thread. Other threads that already run keep theirs (it
 * cannot be changed from another thread). Not in a vfork child: it runs on its parent's memory
 * and signal stack. */
void ctp_signal_stack_onstack(void)
{
	if (ctp_in_vfork_child())
		return;
	__atomic_store_n(&onstack_handlers, true, __ATOMIC_RELAXED);
	(void)overcommit_strict(); /* read here, in the program's call, not at a thread's start */
	struct ctp_thread *t = &ctp_tls_thread;
	if (!ours_and_idle(t) || t->altstack_size >= wanted_size(t))
		return;
	ctp_signal_stack_release(t);
	ctp_signal_stack_for_thread(t);
}

/* The program asks for, or changes, its thread's signal stack. The preload's is kept out of its
 * sight, as its handlers are: a program that asks whether one is set before it sets its own
 * (Rust's runtime does) reads back none, as untraced. One the program sets replaces ours, which
 * is given back. */
CTP_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	struct ctp_thread *t = &ctp_tls_thread;
	void *ours = t->altstack;
	int rc = altstack_syscall(ss, old);
	if (rc != 0 || !ours || ctp_in_vfork_child()) /* a vfork child's is its parent's too */
		return rc;
	if (old && old->ss_sp == ours)
		*old = (stack_t){.ss_flags = SS_DISABLE};
	if (ss) {
		/* The kernel refuses a change while a handler runs on ours: it is not in use. */
		unmap(t);
	}
	return rc;
}

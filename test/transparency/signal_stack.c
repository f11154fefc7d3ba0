/* The signal stack a program sees and sets (sigaltstack), as a runtime with stack-overflow
 * reports does it (Rust's, for one): it asks whether its thread has one, in main before and
 * after its first coroutine and in a new thread, and sets its own only where there is none.
 * It reads back what it set, and none once it disabled one. A second thread makes a coroutine
 * by the signal-stack trick, as QEMU's sigaltstack backend does: the new stack set as the
 * signal stack (the one before read back in the same call), a handler run there saves itself
 * with sigsetjmp, the signal stack disabled, the one before put back only if there was one;
 * the coroutine then runs by siglongjmp. Then a coroutine overflows its guarded stack, and the
 * program's own SIGSEGV handler, on the program's own signal stack, reports it and _exit(3)s. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "tp_coro.h"

enum { SIGNAL_STACK = 64 * 1024, CORO_STACK = 64 * 1024, PAGE = 4096 };

static char *own_stack;

static void show(const char *when)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0) {
		perror("sigaltstack");
		exit(2);
	}
	const char *whose = ss.ss_flags & SS_DISABLE ? "none"
			    : ss.ss_sp == own_stack  ? "the program's own"
						     : "another";
	printf("%s: signal stack %s, size %zu\n", when, whose, ss.ss_size);
}

/* Sets the program's own signal stack where the thread has none, as such runtimes do. */
static void set_own_if_none(const char *when)
{
	stack_t ss;
	sigaltstack(NULL, &ss);
	if (!(ss.ss_flags & SS_DISABLE)) {
		printf("%s: kept the signal stack it found\n", when);
		return;
	}
	stack_t mine = {.ss_sp = own_stack, .ss_size = SIGNAL_STACK};
	if (sigaltstack(&mine, NULL) != 0) {
		perror("sigaltstack");
		exit(2);
	}
	show(when);
}

static void *thread_main(void *arg)
{
	(void)arg;
	show("new thread");
	set_own_if_none("new thread, after setting its own");
	stack_t off = {.ss_flags = SS_DISABLE};
	sigaltstack(&off, NULL);
	show("new thread, after disabling it");
	return NULL;
}

static sigjmp_buf trick_main, trick_start, trick_coro;
static volatile sig_atomic_t trick_saved;

static volatile int trick_runs;

static void trick_body(void)
{
	for (trick_runs = 0; trick_runs < 3; trick_runs++) {
		printf("signal-stack coroutine: run %d\n", trick_runs);
		if (!sigsetjmp(trick_coro, 0))
			siglongjmp(trick_main, 1);
	}
	siglongjmp(trick_main, 2);
}

static void on_trick_signal(int sig)
{
	(void)sig;
	if (!sigsetjmp(trick_start, 0)) {
		trick_saved = 1;
		return;
	}
	trick_body();
}

static void *trick_thread(void *arg)
{
	(void)arg;
	char *stack = malloc(CORO_STACK);
	stack_t ss = {.ss_sp = stack, .ss_size = CORO_STACK}, before;
	struct sigaction sa = {.sa_handler = on_trick_signal, .sa_flags = SA_ONSTACK}, old_sa;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, &old_sa);
	if (sigaltstack(&ss, &before) != 0) {
		perror("sigaltstack");
		exit(2);
	}
	raise(SIGUSR2);
	stack_t off = {.ss_flags = SS_DISABLE};
	sigaltstack(&off, NULL);
	printf("signal-stack coroutine: the signal stack before it: %s\n",
	       before.ss_flags & SS_DISABLE ? "none" : "one");
	if (!(before.ss_flags & SS_DISABLE))
		sigaltstack(&before, NULL);
	sigaction(SIGUSR2, &old_sa, NULL);
	/* Back here each time the coroutine yields (1), until it finishes (2). */
	int r = sigsetjmp(trick_main, 0);
	if (r == 0)
		siglongjmp(trick_start, 1);
	if (r == 1)
		siglongjmp(trick_coro, 1);
	show("signal-stack coroutine, at its end");
	return NULL;
}

static void on_segv(int sig, siginfo_t *info, void *uctx)
{
	(void)sig;
	(void)info;
	(void)uctx;
	char here;
	int on_own = &here >= own_stack && &here < own_stack + SIGNAL_STACK;
	const char *msg = on_own ? "overflow caught on the program's own signal stack\n"
				 : "overflow caught elsewhere\n";
	if (write(1, msg, __builtin_strlen(msg)) < 0)
		_exit(4);
	_exit(3);
}

static ucontext_t main_ctx, deep_ctx;

static volatile int depth_limit = 1 << 30; /* never reached: the guard page is */

static int recurse(int n)
{
	volatile char pad[512];
	pad[0] = (char)n;
	return n < depth_limit ? recurse(n + 1) + pad[0] : 0;
}

static void deep(void)
{
	recurse(0);
}

int main(void)
{
	own_stack = malloc(SIGNAL_STACK);
	show("main, at its start");
	tp_touch_coroutine();
	show("main, after its first coroutine");
	pthread_t t;
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, trick_thread, NULL);
	pthread_join(t, NULL);
	set_own_if_none("main, after setting its own");

	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	char *stack = mmap(NULL, CORO_STACK + PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(stack, PAGE, PROT_NONE); /* the guard page below it */
	getcontext(&deep_ctx);
	deep_ctx.uc_stack.ss_sp = stack + PAGE;
	deep_ctx.uc_stack.ss_size = CORO_STACK;
	deep_ctx.uc_link = &main_ctx;
	makecontext(&deep_ctx, deep, 0);
	fflush(stdout);
	swapcontext(&main_ctx, &deep_ctx);
	printf("the coroutine came back\n");
	return 0;
}

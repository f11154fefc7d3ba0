/* How much of a coroutine's stack its switches use, and switches from a signal handler, with
 * Boost.Context's C ABI (libboost_context, as Boost.Coroutine2 and Boost.Fiber call it) or with
 * glibc's ucontext.
 *
 * 1. A coroutine on a 16 KiB stack filled with a pattern switches back and forth at a few depths;
 *    the program writes how deep into the stack anything was written to stack_use.txt in its
 *    working directory (the case compares the runs). Coroutine stacks are often small and
 *    malloc'd, so every byte a tracer adds below the program's frames costs memory (and room).
 * 2. While the main thread switches with a second coroutine, SIGALRM handlers make a round trip
 *    into a coroutine of their own, from wherever the signal landed (inside a switch included),
 *    until 200 signals were handled. Every round trip must come back and every answer of the
 *    ping-pong must be right.
 *
 * Usage: switch_stack_use fcontext|ucontext */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

#include "fcontext_abi.h"

enum { STACK = 16 * 1024, PATTERN = 0xa5, DEPTHS = 4, SIGNALS = 200, MIN_TRIPS = 100000 };
enum coroutine { MEASURED, PONG, HANDLER, COROUTINES };

static int use_fcontext;
static unsigned char stacks[COROUTINES][STACK] __attribute__((aligned(64)));
static ucontext_t u_main, u_handler_back, u_co[COROUTINES];
static fcontext_t f_co[COROUTINES], f_back[COROUTINES];
static volatile long message; /* what the ping-pong hands over, either way */

/* From a coroutine back to whoever resumed it. */
static void suspend(enum coroutine c)
{
	if (use_fcontext)
		f_back[c] = jump_fcontext(f_back[c], NULL).fctx;
	else
		swapcontext(&u_co[c], c == HANDLER ? &u_handler_back : &u_main);
}

/* Into coroutine c, until it suspends. */
static void resume(enum coroutine c)
{
	if (use_fcontext)
		f_co[c] = jump_fcontext(f_co[c], NULL).fctx;
	else
		swapcontext(c == HANDLER ? &u_handler_back : &u_main, &u_co[c]);
}

/* Part 1. Suspends `depth` frames of recursion down. */
__attribute__((noinline)) static long suspend_at_depth(int depth)
{
	volatile char pad[64];
	pad[0] = (char)depth;
	if (depth > 0)
		return suspend_at_depth(depth - 1) + pad[0];
	suspend(MEASURED);
	return pad[0];
}

static void measured(void)
{
	for (int round = 0;; round++)
		suspend_at_depth(round % DEPTHS);
}

/* Part 2. */
static void pong(void)
{
	for (;;) {
		message = message + 1;
		suspend(PONG);
	}
}

static void handler_coroutine(void)
{
	for (;;)
		suspend(HANDLER); /* straight back to the handler */
}

static void (*const bodies[COROUTINES])(void) = {measured, pong, handler_coroutine};

static void fcontext_entry(transfer_t t)
{
	enum coroutine c = (enum coroutine)(intptr_t)t.data;
	f_back[c] = t.fctx;
	bodies[c]();
}

static void make(enum coroutine c)
{
	if (use_fcontext) {
		f_co[c] = make_fcontext(stacks[c] + STACK, STACK, fcontext_entry);
		/* The first resume hands the coroutine its number. */
		f_co[c] = jump_fcontext(f_co[c], (void *)(intptr_t)c).fctx;
		return;
	}
	getcontext(&u_co[c]);
	if (c == HANDLER) /* no handler inside the handler's coroutine: one u_handler_back */
		sigaddset(&u_co[c].uc_sigmask, SIGALRM);
	u_co[c].uc_stack.ss_sp = stacks[c];
	u_co[c].uc_stack.ss_size = STACK;
	u_co[c].uc_link = NULL;
	makecontext(&u_co[c], bodies[c], 0);
	resume(c);
}

static size_t deepest_write(void)
{
	size_t untouched = 0;
	while (untouched < STACK && stacks[MEASURED][untouched] == PATTERN)
		untouched++;
	return STACK - untouched;
}

static volatile sig_atomic_t signals_handled, round_trips_back;

static void on_alarm(int sig)
{
	(void)sig;
	resume(HANDLER);
	round_trips_back = round_trips_back + 1;
	signals_handled = signals_handled + 1;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "fcontext") != 0 && strcmp(argv[1], "ucontext") != 0)) {
		fprintf(stderr, "usage: switch_stack_use fcontext|ucontext\n");
		return 2;
	}
	use_fcontext = strcmp(argv[1], "fcontext") == 0;

	memset(stacks[MEASURED], PATTERN, STACK);
	make(MEASURED);
	for (int i = 0; i < 100; i++)
		resume(MEASURED);
	FILE *out = fopen("stack_use.txt", "w");
	if (!out || fprintf(out, "%zu\n", deepest_write()) < 0 || fclose(out) != 0) {
		perror("stack_use.txt");
		return 1;
	}
	printf("%s: measured a coroutine's stack use\n", argv[1]);

	make(HANDLER);
	make(PONG);
	struct sigaction sa = {.sa_handler = on_alarm};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &every, NULL);
	long trips = 0, wrong = 0;
	while (signals_handled < SIGNALS || trips < MIN_TRIPS) {
		long sent = message;
		resume(PONG);
		wrong += message != sent + 1;
		trips++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ping-pong: every answer was one more: %s\n", wrong == 0 ? "yes" : "no");
	printf("handler round trips: at least %d, all came back: %s\n", SIGNALS,
	       round_trips_back == signals_handled ? "yes" : "no");
	return 0;
}

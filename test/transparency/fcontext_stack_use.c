/* How much of a Boost fiber's stack its switches use, and switches from a signal handler.
 *
 * 1. A coroutine on a 16 KiB stack filled with a pattern switches back and forth at a few depths;
 *    the program prints how deep into the stack anything was written. A fiber stack is often
 *    small and malloc'd, so every byte a tracer adds below the program's frames costs memory
 *    (and room). The depth must be the same traced as untraced.
 * 2. While the main thread switches between two coroutines, SIGALRM handlers make a round trip
 *    into a coroutine of their own, from wherever the signal landed (inside a switch included),
 *    until 200 signals were handled. Every round trip must come back and the ping-pong's sum
 *    must be right.
 *
 * Boost.Context's C ABI (libboost_context), as Boost.Coroutine2 and Boost.Fiber call it. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

typedef void *fcontext_t;
typedef struct {
	fcontext_t fctx;
	void *data;
} transfer_t;
extern transfer_t jump_fcontext(fcontext_t to, void *vp);
extern fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

enum { STACK = 16 * 1024, PATTERN = 0xa5, DEPTHS = 4, SIGNALS = 200 };

static unsigned char measured_stack[STACK] __attribute__((aligned(64)));
static fcontext_t back;

/* Suspends (returns to main) from `depth` frames of recursion down. */
__attribute__((noinline)) static long suspend_at_depth(int depth)
{
	volatile char pad[64];
	pad[0] = (char)depth;
	if (depth > 0)
		return suspend_at_depth(depth - 1) + pad[0];
	back = jump_fcontext(back, NULL).fctx;
	return pad[0];
}

static void measured(transfer_t t)
{
	back = t.fctx;
	for (int round = 0;; round++)
		suspend_at_depth(round % DEPTHS);
}

static size_t deepest_write(void)
{
	size_t untouched = 0;
	while (untouched < STACK && measured_stack[untouched] == PATTERN)
		untouched++;
	return STACK - untouched;
}

static void measure_stack_use(void)
{
	memset(measured_stack, PATTERN, sizeof(measured_stack));
	fcontext_t co = make_fcontext(measured_stack + STACK, STACK, measured);
	for (int i = 0; i < 100; i++)
		co = jump_fcontext(co, NULL).fctx;
	printf("deepest write into the fiber's stack: %zu bytes\n", deepest_write());
}

/* Part 2. */
static unsigned char pong_stack[64 * 1024], handler_stack[64 * 1024];
static volatile sig_atomic_t signals_handled, round_trips_back;
static fcontext_t handler_co;

static void handler_coroutine(transfer_t t)
{
	for (;;)
		t = jump_fcontext(t.fctx, NULL); /* straight back to the handler */
}

static void on_alarm(int sig)
{
	(void)sig;
	handler_co = jump_fcontext(handler_co, NULL).fctx;
	round_trips_back = round_trips_back + 1;
	signals_handled = signals_handled + 1;
}

static void pong(transfer_t t)
{
	for (;;)
		t = jump_fcontext(t.fctx, (void *)((intptr_t)t.data + 1));
}

static void switch_under_signals(void)
{
	handler_co = make_fcontext(handler_stack + sizeof(handler_stack), sizeof(handler_stack),
				   handler_coroutine);
	fcontext_t co = make_fcontext(pong_stack + sizeof(pong_stack), sizeof(pong_stack), pong);
	struct sigaction sa = {.sa_handler = on_alarm};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 200}, {0, 200}};
	setitimer(ITIMER_REAL, &every, NULL);
	long sum = 0, trips = 0;
	while (signals_handled < SIGNALS || trips < 100000) {
		transfer_t r = jump_fcontext(co, (void *)(intptr_t)trips);
		co = r.fctx;
		sum += (intptr_t)r.data - trips;
		trips++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ping-pong: every answer was one more: %s\n", sum == trips ? "yes" : "no");
	printf("handler round trips: at least %d, all came back: %s\n", SIGNALS,
	       round_trips_back == signals_handled ? "yes" : "no");
}

int main(void)
{
	measure_stack_use();
	switch_under_signals();
	return 0;
}

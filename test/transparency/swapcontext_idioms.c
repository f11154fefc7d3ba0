/* swapcontext idioms, the switch path a ucontext program takes most. "peer": two makecontext
 * coroutines swap straight to each other ROUNDS times, not through main, with errno set before
 * each swap and checked after it (it must be what the side that swapped back set), then one
 * returns through uc_link. "saved": a coroutine swaps to a
 * context main saved with getcontext on its own stack (a switch to the thread, not to a
 * coroutine), and main swaps back in. "self": swapcontext to a context saved with getcontext on
 * the stack already running, a loop counting to 5 (no switch at all). */
#include <errno.h>
#include <string.h>

#include "tp_coro.h"

enum { ROUNDS = 1000 };

static ucontext_t main_ctx, peer_ctx[2];
static char peer_stack[2][64 * 1024];
/* In statics: swapcontext returns twice into main's frame. */
static volatile int swaps[2], errno_lost, errno_set;

/* errno belongs to the thread, not to a coroutine: after a swap returns, it holds what the side
 * that swapped back set last, which errno_set remembers. */
static void swap_keeping_errno(ucontext_t *from, const ucontext_t *to, int value)
{
	errno_set = value;
	errno = value;
	swapcontext(from, to);
	if (errno != errno_set)
		errno_lost++;
}

static void peer_body(int me)
{
	for (int i = 0; i < ROUNDS; i++) {
		swaps[me]++;
		swap_keeping_errno(&peer_ctx[me], &peer_ctx[!me], 1000 + me);
	}
}

static void make(ucontext_t *ctx, char *stack, size_t size, void (*fn)(void), int arg)
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = size;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 1, arg);
}

static int peer(void)
{
	for (int i = 0; i < 2; i++)
		make(&peer_ctx[i], peer_stack[i], sizeof(peer_stack[i]), (void (*)(void))peer_body,
		     i);
	/* Peer 0 finishes first and returns to main through uc_link; peer 1 stays suspended. */
	swap_keeping_errno(&main_ctx, &peer_ctx[0], 7);
	printf("peer: swaps %d and %d, errno lost %d times\n", swaps[0], swaps[1], errno_lost);
	return 0;
}

static ucontext_t saved_main, visitor_ctx;
static char visitor_stack[64 * 1024];
static volatile int visits;

static void visitor_body(int unused)
{
	(void)unused;
	for (;;) {
		visits++;
		swapcontext(&visitor_ctx, &saved_main);
	}
}

static int saved(void)
{
	make(&visitor_ctx, visitor_stack, sizeof(visitor_stack), (void (*)(void))visitor_body, 0);
	getcontext(&saved_main); /* main's own stack: each visit comes back here */
	if (visits < 5)
		swapcontext(&main_ctx, &visitor_ctx);
	printf("saved: %d visits\n", visits);
	return 0;
}

static int self(void)
{
	ucontext_t here, scratch;
	static volatile int n;
	getcontext(&here);
	n++;
	printf("self: n=%d\n", n);
	if (n < 5)
		swapcontext(&scratch, &here);
	return 0;
}

int main(int argc, char **argv)
{
	tp_touch_coroutine();
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "peer") == 0)
		return peer();
	if (strcmp(mode, "saved") == 0)
		return saved();
	if (strcmp(mode, "self") == 0)
		return self();
	fprintf(stderr, "usage: swapcontext_idioms peer|saved|self\n");
	return 2;
}

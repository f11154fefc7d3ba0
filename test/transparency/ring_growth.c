/* A thread that switches fast enough to grow its event ring: the tracer moves it from the
 * starting ring to a full-size one and maps that one's pages ahead in one call. errno, set to
 * a sentinel before every switch, is still the sentinel after it, on both sides, growth and
 * all; and the thread's switches are all in the trace, or counted as lost. (Whether the ring
 * grows depends on how soon the collector reads it: 200,000 switches in a few milliseconds
 * fill half of the starting ring many times over.) */
#include <errno.h>
#include <stdio.h>
#include <ucontext.h>

enum { ROUNDS = 100000, SENTINEL = 4242 };

static ucontext_t main_ctx, co_ctx;
static char co_stack[64 * 1024];
static long changed;

static void body(void)
{
	for (;;) {
		errno = SENTINEL;
		swapcontext(&co_ctx, &main_ctx);
		changed += errno != SENTINEL;
	}
}

int main(void)
{
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	for (int i = 0; i < ROUNDS; i++) {
		errno = SENTINEL;
		swapcontext(&main_ctx, &co_ctx);
		changed += errno != SENTINEL;
	}
	printf("%d round trips, errno changed %ld times\n", ROUNDS, changed);
	return 0;
}

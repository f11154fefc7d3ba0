/* A ucontext ping-pong as fast as swapcontext goes, for testing that the collector keeps up:
 * the main thread and one coroutine resume each other ROUNDS times, then the coroutine returns
 * through uc_link. It prints how many switches it made (every swapcontext, and the return), so
 * that a test can compare the trace's switch lines plus its loss counts with the truth.
 *
 *   pingpong_count [ROUNDS]   (default 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, pong_ctx;
static long rounds, switches;

static void pong(void)
{
	for (long i = 1; i < rounds; i++) {
		switches++;
		swapcontext(&pong_ctx, &main_ctx);
	}
	switches++; /* the return to uc_link is a switch too */
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 1000000;
	if (rounds < 1)
		rounds = 1;
	static char stack[64 * 1024];
	getcontext(&pong_ctx);
	pong_ctx.uc_stack.ss_sp = stack;
	pong_ctx.uc_stack.ss_size = sizeof(stack);
	pong_ctx.uc_link = &main_ctx;
	makecontext(&pong_ctx, pong, 0);
	for (long i = 0; i < rounds; i++) {
		switches++;
		swapcontext(&main_ctx, &pong_ctx);
	}
	printf("switches %ld\n", switches);
	return 0;
}

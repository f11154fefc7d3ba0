/* Two contexts ping-pong: the main thread resumes one coroutine ROUNDS+1 times; the coroutine
 * yields back ROUNDS times and then returns through uc_link. So the trace must hold exactly
 * 2 * (ROUNDS + 1) switches: ROUNDS+1 main->coroutine swapcontexts, ROUNDS coroutine->main
 * swapcontexts and one return.
 *
 *   ucontext_pingpong [ROUNDS [EXIT_STATUS]]   (defaults 100 and 0) */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, pong_ctx;
static int rounds;
static long pongs;

static void pong(void)
{
	for (int i = 0; i < rounds; i++) {
		pongs++;
		swapcontext(&pong_ctx, &main_ctx);
	}
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 100;
	int status = argc > 2 ? atoi(argv[2]) : 0;
	static char stack[64 * 1024];
	getcontext(&pong_ctx);
	pong_ctx.uc_stack.ss_sp = stack;
	pong_ctx.uc_stack.ss_size = sizeof(stack);
	pong_ctx.uc_link = &main_ctx;
	makecontext(&pong_ctx, pong, 0);
	long pings = 0;
	for (int i = 0; i <= rounds; i++) {
		pings++;
		swapcontext(&main_ctx, &pong_ctx);
	}
	printf("pings %ld pongs %ld\n", pings, pongs);
	return status;
}

/* A slow ping-pong for tests that watch a trace while it is written (ctp-cat --follow): the
 * main thread resumes one coroutine TICKS times, sleeping MS milliseconds before each resume, so
 * the run lasts about TICKS * MS ms and the trace grows frame by frame meanwhile. Prints
 * "switches N", the switches it made (TICKS resumes, TICKS-1 yields, one return).
 *
 *   views_ticker [TICKS [MS]]   (defaults 20 and 100) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static ucontext_t main_ctx, tick_ctx;
static int ticks;

static void tick(void)
{
	for (int i = 1; i < ticks; i++)
		swapcontext(&tick_ctx, &main_ctx);
}

int main(int argc, char **argv)
{
	ticks = argc > 1 ? atoi(argv[1]) : 20;
	long ms = argc > 2 ? atol(argv[2]) : 100;
	static char stack[64 * 1024];
	getcontext(&tick_ctx);
	tick_ctx.uc_stack.ss_sp = stack;
	tick_ctx.uc_stack.ss_size = sizeof(stack);
	tick_ctx.uc_link = &main_ctx;
	makecontext(&tick_ctx, tick, 0);
	struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
	for (int i = 0; i < ticks; i++) {
		nanosleep(&pause, NULL);
		swapcontext(&main_ctx, &tick_ctx);
	}
	printf("switches %d\n", 2 * ticks);
	return 0;
}

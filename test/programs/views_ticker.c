/* A slow ping-pong for tests that watch a trace while it is written (ctp-cat --follow): the
 * main thread resumes one coroutine again and again, waiting MS milliseconds before each resume,
 * so the trace grows frame by frame meanwhile. With TICKS > 0 it resumes it TICKS times (the run
 * lasts about TICKS * MS ms); with TICKS = 0 it goes on until its standard input ends, so that a
 * test can let it end once it has seen what it waits for. Prints "switches N", the switches it
 * made (each resume, a yield after each but the last, whose coroutine returns).
 *
 *   views_ticker [TICKS [MS]]   (defaults 20 and 100) */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t main_ctx, tick_ctx;
static volatile bool more = true;

static void tick(void)
{
	while (more)
		swapcontext(&tick_ctx, &main_ctx);
}

/* Waits up to ms for standard input to end; true once it has. */
static bool input_ended(long ms)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};
	if (poll(&p, 1, (int)ms) <= 0)
		return false;
	char byte;
	return read(0, &byte, 1) <= 0;
}

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 20;
	long ms = argc > 2 ? atol(argv[2]) : 100;
	static char stack[64 * 1024];
	getcontext(&tick_ctx);
	tick_ctx.uc_stack.ss_sp = stack;
	tick_ctx.uc_stack.ss_size = sizeof(stack);
	tick_ctx.uc_link = &main_ctx;
	makecontext(&tick_ctx, tick, 0);
	struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
	int resumes = 0;
	for (bool last = false; !last;) {
		if (ticks > 0) {
			nanosleep(&pause, NULL);
			last = resumes + 1 >= ticks;
		} else {
			last = input_ended(ms);
		}
		more = !last;
		swapcontext(&main_ctx, &tick_ctx);
		resumes++;
	}
	printf("switches %d\n", 2 * resumes);
	return 0;
}

/* One coroutine that suspends, round after round, at the same call site and at the same stack
 * depth, reached alternately through two callers whose frames are alike: read_header on even
 * rounds, read_body on odd ones. Each suspend lasts ROUND_MS (the program's own pace, like a
 * connection waiting for its peer), long enough for the collector to unwind it from the saved
 * context; with ROUND_MS 0, until a byte comes on standard input, so that a test can let each
 * round end once it has seen the collector deal with the suspend. A place (call site and depth)
 * does not tell the two paths apart: the stack must be read from memory each time, not
 * remembered.
 *
 * Usage: same_place_callers [ROUNDS [ROUND_MS]]   (defaults 10, 100)
 * Prints "rounds=N". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK_SIZE (64 * 1024)
#define NOINLINE __attribute__((noinline))

static ucontext_t main_ctx, coro_ctx;
static char stack[STACK_SIZE];
static volatile int progress;

static NOINLINE void wait_io(void)
{
	swapcontext(&coro_ctx, &main_ctx);
	progress++; /* keeps the call from being a tail call */
}

static NOINLINE void read_header(void)
{
	wait_io();
	progress++;
}

static NOINLINE void read_body(void)
{
	wait_io();
	progress++;
}

static NOINLINE void connection(void)
{
	for (int round = 0;; round++) {
		if (round % 2 == 0)
			read_header();
		else
			read_body();
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	long round_ms = argc > 2 ? atol(argv[2]) : 100;
	getcontext(&coro_ctx);
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = STACK_SIZE;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, connection, 0);
	struct timespec pause = {round_ms / 1000, (round_ms % 1000) * 1000000L};
	for (int i = 0; i < rounds; i++) {
		swapcontext(&main_ctx, &coro_ctx);
		char byte;
		if (round_ms > 0)
			nanosleep(&pause, NULL);
		else if (read(0, &byte, 1) != 1)
			break; /* the test is gone */
	}
	printf("rounds=%d\n", rounds);
	return 0;
}

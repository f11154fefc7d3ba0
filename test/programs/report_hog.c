/* Two coroutines on one thread: `polite` yields every millisecond, `hog` spins for SPIN_MS
 * without yielding (a coroutine doing blocking work on the scheduler's thread), then yields
 * once and ends. The report must name the hog, and only the hog, as never yielding.
 *
 *   report_hog [SPIN_MS]   (default 700) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, hog_ctx, polite_ctx;
static char hog_stack[STACK_SIZE], polite_stack[STACK_SIZE];
static long spin_ms;

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void spin_without_yielding(void)
{
	int64_t until = now_ms() + spin_ms;
	while (now_ms() < until)
		;
}

static void hog(void)
{
	spin_without_yielding();
	swapcontext(&hog_ctx, &main_ctx);
}

static void polite(void)
{
	for (int i = 0; i < 20; i++) {
		int64_t until = now_ms() + 1;
		while (now_ms() < until)
			;
		swapcontext(&polite_ctx, &main_ctx);
	}
}

static void make(ucontext_t *ctx, char *stack, void (*fn)(void))
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = STACK_SIZE;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 0);
}

int main(int argc, char **argv)
{
	spin_ms = argc > 1 ? atol(argv[1]) : 700;
	make(&hog_ctx, hog_stack, hog);
	make(&polite_ctx, polite_stack, polite);
	for (int i = 0; i < 21; i++) /* 20 yields, then its return */
		swapcontext(&main_ctx, &polite_ctx);
	swapcontext(&main_ctx, &hog_ctx); /* spins, yields */
	swapcontext(&main_ctx, &hog_ctx); /* returns */
	puts("done");
	return 0;
}

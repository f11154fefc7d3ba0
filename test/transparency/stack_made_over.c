/* Coroutines made over the stack of a live one, as a program that reuses its stacks without
 * ending what ran there: A, suspended on 128 KiB of a buffer (the stack map's table of chunks);
 * then B on 14 KiB inside A's stack (the table of pages), and C on 8 KiB right above B, on B's
 * last page but not on B. B and C then take turns, 100 rounds, and return: on another thread,
 * which knows nothing of them yet (the tracer finds them by the stack map, not by what the
 * making thread remembers). */
#include <pthread.h>

#include "tp_coro.h"

enum { KIB = 1024, ROUNDS = 100 };

static ucontext_t main_ctx, a_ctx, b_ctx, c_ctx; /* main_ctx: where each resume came from */
static char buffer[256 * KIB] __attribute__((aligned(4096)));
static int runs[3];

static void body(int which, ucontext_t *self)
{
	for (int i = 0; i < ROUNDS; i++) {
		runs[which]++;
		swapcontext(self, &main_ctx);
	}
}

static void a_body(void)
{
	body(0, &a_ctx);
}

static void b_body(void)
{
	body(1, &b_ctx);
}

static void c_body(void)
{
	body(2, &c_ctx);
}

static void make(ucontext_t *ctx, void (*fn)(void), size_t from, size_t size)
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = buffer + from;
	ctx->uc_stack.ss_size = size;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 0);
}

static void *take_turns(void *arg)
{
	(void)arg;
	for (int i = 0; i <= ROUNDS; i++) {
		swapcontext(&main_ctx, &b_ctx);
		swapcontext(&main_ctx, &c_ctx);
	}
	return NULL;
}

int main(void)
{
	tp_touch_coroutine();
	make(&a_ctx, a_body, 0, 128 * KIB);
	swapcontext(&main_ctx, &a_ctx); /* A suspends, and is never resumed */
	make(&b_ctx, b_body, 100 * KIB, 14 * KIB);
	make(&c_ctx, c_body, 114 * KIB, 8 * KIB);
	pthread_t worker;
	if (pthread_create(&worker, NULL, take_turns, NULL) != 0 || pthread_join(worker, NULL) != 0)
		return 2;
	printf("runs: A %d, B %d, C %d\n", runs[0], runs[1], runs[2]);
	return 0;
}

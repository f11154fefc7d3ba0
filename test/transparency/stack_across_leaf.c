/* Coroutine stacks that cross a 16 MiB boundary: the tracer's stack map keeps 4096 pages per
 * node, and a stack over two nodes is registered, ended and retired node by node. The first
 * coroutine suspends above the boundary and below it (its recursion goes down across it), and
 * every resume must find it on either side. The second suspends below the boundary, and then
 * the part of its stack below the boundary is unmapped under it: the coroutine is gone. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>

enum {
	BOUNDARY = 16 << 20,
	STACK = 128 * 1024, /* half above the boundary, half below */
	FRAME_BYTES = 1024,
	DEPTH = 96, /* about 100 KiB down from the top: well below the boundary */
	ROUNDS = 3,
};

static ucontext_t main_ctx, co_ctx;
static long sum;

static __attribute__((noinline)) void suspend_here(void)
{
	swapcontext(&co_ctx, &main_ctx);
}

static __attribute__((noinline)) long descend(int level)
{
	volatile char frame[FRAME_BYTES];
	for (int i = 0; i < FRAME_BYTES; i++)
		frame[i] = (char)(level + i);
	if (level == DEPTH) {
		suspend_here();
		return frame[1];
	}
	return descend(level + 1) + frame[level % FRAME_BYTES];
}

/* Suspends high, deep, and high again, each ROUNDS times. */
static void body(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		suspend_here();
		sum += descend(1);
	}
}

static void make(char *stack)
{
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
}

int main(void)
{
	/* Room for a 16 MiB-aligned address with half a stack on each side of it. */
	size_t len = 2 * (size_t)BOUNDARY;
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	uintptr_t boundary = ((uintptr_t)map + BOUNDARY) & ~(uintptr_t)(BOUNDARY - 1);
	char *stack = (char *)boundary - STACK / 2;

	/* The first coroutine runs to its end: 2 * ROUNDS suspends, then its return. */
	make(stack);
	int resumes = 0;
	for (int i = 0; i <= 2 * ROUNDS; i++, resumes++)
		swapcontext(&main_ctx, &co_ctx);
	printf("first: %d resumes, sum %ld\n", resumes, sum);

	/* The second suspends deep, below the boundary; then that half of its stack is given
	 * back. */
	make(stack);
	swapcontext(&main_ctx, &co_ctx); /* suspends high */
	swapcontext(&main_ctx, &co_ctx); /* suspends deep */
	if (munmap(stack, STACK / 2) != 0) {
		perror("munmap");
		return 2;
	}
	printf("second: lower half unmapped\n");
	return 0;
}

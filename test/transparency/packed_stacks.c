/* Coroutines on 4 KiB stacks packed side by side, the first 2 KiB into a page: every page holds
 * parts of two stacks. The tracer's stack map keeps two candidates per page, the most that
 * stacks of 4 KiB or more can need; each switch must still find the coroutine it resumes.
 * Round-robin: each coroutine is resumed ROUNDS times, then returns. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>

enum {
	STACK = 4096,
	OFFSET = 2048, /* the first stack starts mid-page, so none is page-aligned */
	COROS = 24,
	ROUNDS = 3,
};

static ucontext_t main_ctx, co_ctx[COROS];
static long runs[COROS];

static void body(int i)
{
	for (int r = 0; r < ROUNDS; r++) {
		runs[i]++;
		swapcontext(&co_ctx[i], &main_ctx);
	}
}

/* Binds swapcontext here, on the thread's own stack: a first call through the PLT from a 4 KiB
 * stack would resolve the symbol there, with the whole vector register state. (getcontext
 * returns twice: kept out of main, whose locals would otherwise be clobbered.) */
static __attribute__((noinline)) void bind_swapcontext(void)
{
	static ucontext_t warm;
	static volatile int swapped;
	getcontext(&warm);
	if (!swapped) {
		swapped = 1;
		swapcontext(&main_ctx, &warm);
	}
}

static __attribute__((noinline)) void make(int i, char *stack)
{
	getcontext(&co_ctx[i]);
	co_ctx[i].uc_stack.ss_sp = stack;
	co_ctx[i].uc_stack.ss_size = STACK;
	co_ctx[i].uc_link = &main_ctx;
	makecontext(&co_ctx[i], (void (*)(void))body, 1, i);
}

int main(void)
{
	size_t len = OFFSET + (size_t)COROS * STACK + 4096;
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	bind_swapcontext();
	for (int i = 0; i < COROS; i++)
		make(i, map + OFFSET + (size_t)i * STACK);
	/* ROUNDS resumes each, and one more to let it return. */
	for (int r = 0; r <= ROUNDS; r++)
		for (int i = 0; i < COROS; i++)
			swapcontext(&main_ctx, &co_ctx[i]);
	long total = 0;
	for (int i = 0; i < COROS; i++)
		total += runs[i];
	printf("%d coroutines, %ld runs\n", COROS, total);
	return 0;
}

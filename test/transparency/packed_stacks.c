/* Coroutines on stacks packed side by side, none aligned, so that each unit of the tracer's stack
 * map meets two of them: two candidates a unit is the most that stacks of the unit's size or
 * more can need, and each switch must still find the coroutine it resumes.
 *   packed_stacks        600 stacks of 4 KiB from 2 KiB into a page: every page holds parts of
 *                        two (the map of pages, for stacks under 64 KiB). More coroutines than
 *                        a thread keeps answers for, so that resumes go to the map.
 *   packed_stacks mixed  12 stacks, 96 KiB and 16 KiB in turn: every 64 KiB chunk that meets
 *                        two large ones holds a small one too (a stack in each map, side by
 *                        side). Each suspends 8 KiB deep: pages below where it was made, so
 *                        that its first resume goes to the map, and near enough to its top
 *                        that the chunk there mostly meets the next large stack, made later.
 * Round-robin: each coroutine is resumed ROUNDS times, then returns. */
#define _GNU_SOURCE
#include <alloca.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

enum {
	OFFSET = 2048, /* the first stack starts mid-page, so none is page-aligned */
	MAX_COROS = 600,
	ROUNDS = 3,
};

static ucontext_t main_ctx, co_ctx[MAX_COROS];
static long runs[MAX_COROS];

static int mixed; /* the layout: argv[1] is "mixed" */

/* The size of stack i in each layout. */
static size_t stack_size(int i)
{
	if (!mixed)
		return 4096;
	return i % 2 ? 16 * 1024 : 96 * 1024;
}

static void body(int i)
{
	if (mixed) {
		char *pad = alloca(8192);
		pad[0] = 1;
		__asm__ volatile("" : : "r"(pad) : "memory");
	}
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

static __attribute__((noinline)) void make(int i, char *stack, size_t size)
{
	getcontext(&co_ctx[i]);
	co_ctx[i].uc_stack.ss_sp = stack;
	co_ctx[i].uc_stack.ss_size = size;
	co_ctx[i].uc_link = &main_ctx;
	makecontext(&co_ctx[i], (void (*)(void))body, 1, i);
}

int main(int argc, char **argv)
{
	mixed = argc > 1 && strcmp(argv[1], "mixed") == 0;
	int coros = mixed ? 12 : 600;
	size_t len = OFFSET + 4096;
	for (int i = 0; i < coros; i++)
		len += stack_size(i);
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	bind_swapcontext();
	char *stack = map + OFFSET;
	for (int i = 0; i < coros; i++) {
		make(i, stack, stack_size(i));
		stack += stack_size(i);
	}
	/* ROUNDS resumes each, and one more to let it return. */
	for (int r = 0; r <= ROUNDS; r++)
		for (int i = 0; i < coros; i++)
			swapcontext(&main_ctx, &co_ctx[i]);
	long total = 0;
	for (int i = 0; i < coros; i++)
		total += runs[i];
	printf("%d coroutines, %ld runs\n", coros, total);
	return 0;
}

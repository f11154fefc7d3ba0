/* Many coroutines resumed in turn, more than a thread's lookup hints hold (preload/threads.h:
 * 128 sets of two, chosen by a hash of the stack page): stacks of one size side by side in one
 * mapping, so that their suspend points lie at one offset in each and their pages differ by the
 * stride alone. Every switch must still find the coroutine it resumes, whether its hint is
 * there, was pushed out by another page of its set, or belongs to a stack page reused since. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>

enum { COROS = 300, ROUNDS = 3, STACK = 64 * 1024 };

static ucontext_t main_ctx, co_ctx[COROS];
static int runs, starting;

static void body(void)
{
	int me = starting;
	for (int r = 0; r < ROUNDS; r++) {
		runs++;
		swapcontext(&co_ctx[me], &main_ctx);
	}
}

int main(void)
{
	char *stacks = mmap(NULL, (size_t)COROS * STACK, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stacks == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (int i = 0; i < COROS; i++) {
		getcontext(&co_ctx[i]);
		co_ctx[i].uc_stack.ss_sp = stacks + (size_t)i * STACK;
		co_ctx[i].uc_stack.ss_size = STACK;
		co_ctx[i].uc_link = &main_ctx;
		makecontext(&co_ctx[i], body, 0);
	}
	for (int r = 0; r <= ROUNDS; r++)
		for (int i = 0; i < COROS; i++) {
			starting = i;
			swapcontext(&main_ctx, &co_ctx[i]);
		}
	printf("%d coroutines, %d runs\n", COROS, runs);
	return 0;
}

/* Coroutine stacks whose bases share one set of the preload's table of stack bases
 * (preload/stack_release.c), freed while their coroutines are suspended: each must be seen
 * ended. The table is keyed by page as (page ^ page >> 12) mod 4096, so blocks 16 MiB apart
 * can share a set; this program keeps malloc'ing 8 KiB blocks until ENDED + SUSPENDED of them
 * fall into one set (the key is copied here: a change there must be made here too) and gives
 * the rest back. On the first ENDED it runs coroutines that return; then on each of the others
 * it makes a coroutine, switches into it once, and frees its stack. A table with one place a
 * set saw only the last of them freed; one that kept the bases of coroutines that had returned
 * (a set has 4 places) pushed live ones out and missed their frees. */
#include <stdint.h>
#include <stdlib.h>

#include "tp_coro.h"

enum { ENDED = 4, SUSPENDED = 4, SHARING = ENDED + SUSPENDED };
enum { BLOCK = 8192, MAX_BLOCKS = 65536, SETS = 4096 };

static unsigned set_of(const void *p)
{
	uint64_t page = (uint64_t)p >> 12;
	return (unsigned)((page ^ (page >> 12)) & (SETS - 1));
}

static void *blocks[MAX_BLOCKS];
static unsigned short in_set[SETS];
static ucontext_t main_ctx, co_ctx[SHARING];
static volatile int started, returned;

static void co_returns(void)
{
	returned++;
}

static void co_suspends(void)
{
	started++;
	swapcontext(&co_ctx[ENDED + started - 1], &main_ctx);
}

static void make_on(int k, void *stack, void (*body)(void))
{
	getcontext(&co_ctx[k]);
	co_ctx[k].uc_stack.ss_sp = stack;
	co_ctx[k].uc_stack.ss_size = BLOCK;
	co_ctx[k].uc_link = &main_ctx;
	makecontext(&co_ctx[k], body, 0);
}

int main(void)
{
	tp_touch_coroutine();
	int n = 0, found = -1;
	while (found < 0 && n < MAX_BLOCKS) {
		void *b = malloc(BLOCK);
		if (!b) {
			perror("malloc");
			return 2;
		}
		blocks[n++] = b;
		if (++in_set[set_of(b)] == SHARING)
			found = (int)set_of(b);
	}
	if (found < 0) {
		fprintf(stderr, "stack_bases_one_set: no %d of %d blocks share a set\n", SHARING,
			n);
		return 2;
	}
	void *stacks[SHARING];
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (k < SHARING && set_of(blocks[i]) == (unsigned)found)
			stacks[k++] = blocks[i];
		else
			free(blocks[i]);
	}
	for (k = 0; k < ENDED; k++) {
		make_on(k, stacks[k], co_returns);
		swapcontext(&main_ctx, &co_ctx[k]);
	}
	for (k = ENDED; k < SHARING; k++)
		make_on(k, stacks[k], co_suspends);
	for (k = ENDED; k < SHARING; k++)
		swapcontext(&main_ctx, &co_ctx[k]);
	for (k = 0; k < SHARING; k++)
		free(stacks[k]); /* the last SUSPENDED are suspended inside co_suspends: given back,
				    they can never run again */
	printf("%d coroutines returned, %d suspended on stacks sharing one set, their stacks "
	       "freed\n",
	       returned, started);
	return 0;
}

/* A coroutine stack in a malloc'd block after a record (as libpcl lays it out), where the
 * block begins near the end of a page and the stack on the next one: freeing the block while
 * the coroutine is suspended gives its stack back, and the tracer must see that it ended. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { PAGE = 4096, HEADER = 1024, STACK = 64 * 1024, TRIES = 16 };

static ucontext_t main_ctx, co_ctx;

static void body(void)
{
	swapcontext(&co_ctx, &main_ctx);
}

int main(void)
{
	/* Consecutive heap blocks of this size begin 1,040 bytes further into a page each time:
	 * one of a few begins less than HEADER bytes before a page's end. (Static: they live
	 * across swapcontext, which returns twice.) */
	static char *blocks[TRIES], *block;
	static int n;
	while (n < TRIES && !block) {
		char *b = malloc(HEADER + STACK);
		if (!b)
			return 2;
		if ((uintptr_t)b % PAGE > PAGE - HEADER)
			block = b;
		else
			blocks[n++] = b;
	}
	if (!block) {
		fprintf(stderr, "no block began near a page's end\n");
		return 2;
	}
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = block + HEADER;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	swapcontext(&main_ctx, &co_ctx); /* it suspends, and stays suspended */
	free(block);
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	printf("freed a block whose stack began on the next page\n");
	return 0;
}

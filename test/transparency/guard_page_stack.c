/* Coroutine stacks laid out as SimGrid lays them out: a block from posix_memalign, its first page
 * made PROT_NONE (a guard), the rest handed to makecontext or make_fcontext. Each coroutine
 * suspends and stays suspended; the program then gives the guard page its access back and frees
 * the block, as SimGrid does when an actor's context is destroyed. The tracer must see both
 * coroutines end there (abandoned), not leave them suspended at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "fcontext_abi.h"

enum { STACK = 64 * 1024 };

static ucontext_t main_ctx, co_ctx;
static fcontext_t fiber_back;

static void ucontext_body(void)
{
	swapcontext(&co_ctx, &main_ctx);
}

static void fiber_body(transfer_t from)
{
	fiber_back = from.fctx;
	jump_fcontext(fiber_back, NULL);
}

/* A block of one guard page and a stack, the guard PROT_NONE; NULL on failure. */
static char *guarded_block(long page)
{
	void *block;
	if (posix_memalign(&block, (size_t)page, (size_t)page + STACK) != 0)
		return NULL;
	if (mprotect(block, (size_t)page, PROT_NONE) != 0) {
		free(block);
		return NULL;
	}
	return block;
}

static int release(char *block, long page)
{
	if (mprotect(block, (size_t)page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	free(block);
	return 0;
}

int main(void)
{
	/* Static: they live across swapcontext, which returns twice. */
	static long page;
	static char *for_ucontext, *for_fcontext;
	page = sysconf(_SC_PAGESIZE);
	for_ucontext = guarded_block(page);
	for_fcontext = guarded_block(page);
	if (!for_ucontext || !for_fcontext) {
		perror("guarded_block");
		return 2;
	}

	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = for_ucontext + page;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, ucontext_body, 0);
	swapcontext(&main_ctx, &co_ctx); /* it suspends, and stays suspended */

	/* make_fcontext takes the stack's top. */
	fcontext_t fiber = make_fcontext(for_fcontext + page + STACK, STACK, fiber_body);
	jump_fcontext(fiber, NULL); /* it suspends, and stays suspended */

	if (release(for_ucontext, page) != 0 || release(for_fcontext, page) != 0) {
		perror("mprotect");
		return 2;
	}
	printf("freed two guarded blocks with suspended coroutines\n");
	return 0;
}

/* Coroutine stacks laid out as SimGrid lays them out: a block from posix_memalign, its first
 * GUARD pages made PROT_NONE (a guard; SimGrid's contexts/guard-size, 1 by default), the rest
 * handed to makecontext or make_fcontext; both blocks are made before either coroutine (the
 * tracer keeps several guards for the makes that follow). Each coroutine suspends and stays
 * suspended; the program then gives the guard its access back and frees the block, as SimGrid
 * does when an actor's context is destroyed. The tracer must see both coroutines end there
 * (abandoned), not leave them suspended at the end. mprotect, which the tracer hooks to know
 * guards, leaves errno as it was when it succeeds, and as the kernel set it when it fails
 * (printed).
 *
 * Usage: guard_page_stack [GUARD]   (default 1) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "fcontext_abi.h"

enum { STACK = 64 * 1024, SENTINEL = 4242 };

static size_t guard; /* bytes */

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

/* A block of a guard and a stack, the guard PROT_NONE; NULL on failure. */
static char *guarded_block(long page)
{
	void *block;
	if (posix_memalign(&block, (size_t)page, guard + STACK) != 0)
		return NULL;
	errno = SENTINEL;
	if (mprotect(block, guard, PROT_NONE) != 0) {
		free(block);
		return NULL;
	}
	if (errno != SENTINEL)
		printf("mprotect changed errno on success: %d\n", errno);
	return block;
}

static int release(char *block)
{
	if (mprotect(block, guard, PROT_READ | PROT_WRITE) != 0)
		return -1;
	free(block);
	return 0;
}

int main(int argc, char **argv)
{
	/* Static: they live across swapcontext, which returns twice. */
	static long page;
	static char *for_ucontext, *for_fcontext;
	page = sysconf(_SC_PAGESIZE);
	guard = (size_t)page * (size_t)(argc > 1 ? atoi(argv[1]) : 1);
	for_ucontext = guarded_block(page);
	for_fcontext = guarded_block(page);
	if (!for_ucontext || !for_fcontext) {
		perror("guarded_block");
		return 2;
	}

	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = for_ucontext + guard;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, ucontext_body, 0);
	swapcontext(&main_ctx, &co_ctx); /* it suspends, and stays suspended */

	/* make_fcontext takes the stack's top. */
	fcontext_t fiber = make_fcontext(for_fcontext + guard + STACK, STACK, fiber_body);
	jump_fcontext(fiber, NULL); /* it suspends, and stays suspended */

	if (release(for_ucontext) != 0 || release(for_fcontext) != 0) {
		perror("mprotect");
		return 2;
	}
	errno = 0;
	int rc = mprotect(for_ucontext + 1, (size_t)page, PROT_NONE); /* not page-aligned */
	printf("a failing mprotect: %d, errno %d\n", rc, errno);
	printf("freed two guarded blocks with suspended coroutines\n");
	return 0;
}

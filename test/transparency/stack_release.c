/* Coroutine stacks given back: on malloc'd blocks (one with a record before the stack, as libpcl
 * lays it out) freed after the coroutine finished, on an mmap'd stack unmapped, and a small
 * block freed right before a coroutine that still runs: that one must go on running. The
 * program also prints the fd its first open gets once coroutines have switched (with stacks
 * on, the tracer's unwinder has set itself up by then: its own fds must not be the low ones). */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tp_coro.h"

enum { STACK = 64 * 1024, HEADER = 1024, ROUNDS = 3 };

static ucontext_t main_ctx, co_ctx;
static int steps;

static void body(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		steps++;
		swapcontext(&co_ctx, &main_ctx);
	}
}

/* Runs one coroutine on [stack, stack + size) to its end (it returns to main_ctx). */
static void run_on(char *stack, size_t size)
{
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	for (int i = 0; i <= ROUNDS; i++)
		swapcontext(&main_ctx, &co_ctx);
}

int main(void)
{
	/* A stack that is the whole malloc'd block, then one after a record of HEADER bytes. */
	for (int round = 0; round < 2; round++) {
		char *block = malloc(STACK + HEADER);
		if (!block)
			return 2;
		char *stack = round ? block + HEADER : block;
		run_on(stack, STACK);
		free(block);
	}
	int fd = open("/dev/null", O_RDONLY);
	printf("first open after switching gets fd %d\n", fd);
	close(fd);

	/* An mmap'd stack, unmapped after; then a new one, maybe at the same place. */
	for (int round = 0; round < 2; round++) {
		char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
		if (stack == MAP_FAILED)
			return 2;
		run_on(stack, STACK);
		munmap(stack, STACK);
	}

	/* A small block just before a live coroutine's stack, freed while it is suspended. */
	char *small = malloc(64);
	char *stack = malloc(STACK);
	if (!small || !stack)
		return 2;
	memset(small, 1, 64);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	swapcontext(&main_ctx, &co_ctx);
	free(small);
	for (int i = 0; i < ROUNDS; i++)
		swapcontext(&main_ctx, &co_ctx);
	free(stack);
	printf("steps: %d\n", steps);
	return 0;
}

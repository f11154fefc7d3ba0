/* Unwinding on a stack the tracer does not know: a coroutine made without makecontext. The
 * program takes a context with getcontext and points its RSP and RIP by hand at an 8 KiB mmap'ed
 * stack (a PROT_NONE guard page below it), where a function recurses through about 5 KiB and
 * then switches back and forth with swapcontext. Untraced, 3 KiB are room enough. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tp_coro.h"

enum { PAGE = 4096, STACK = 8192, DEPTH = 20, FRAME_BYTES = 200, ROUNDS = 5 };

static ucontext_t main_ctx, raw_ctx;
static volatile int rounds_seen;

static int deep(int level)
{
	volatile char frame[FRAME_BYTES];
	for (int i = 0; i < FRAME_BYTES; i++)
		frame[i] = (char)(level + i);
	if (level == DEPTH) {
		for (int r = 0; r < ROUNDS; r++) {
			rounds_seen++;
			swapcontext(&raw_ctx, &main_ctx);
		}
		return frame[0];
	}
	return deep(level + 1) + frame[level];
}

static void raw_entry(void)
{
	int sum = deep(1);
	printf("raw coroutine: recursion done, sum %d\n", sum);
	fflush(stdout);
	swapcontext(&raw_ctx, &main_ctx); /* never resumed: it has nowhere to return to */
	_exit(3);
}

int main(void)
{
	tp_touch_coroutine();
	char *map = mmap(NULL, PAGE + STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (map == MAP_FAILED || mprotect(map, PAGE, PROT_NONE) != 0) {
		perror("mmap");
		return 2;
	}
	if (getcontext(&raw_ctx) != 0) {
		perror("getcontext");
		return 2;
	}
	/* As if raw_entry had been called: the return-address slot makes RSP+8 16-byte aligned. */
	uintptr_t top = (uintptr_t)(map + PAGE + STACK);
	raw_ctx.uc_mcontext.gregs[REG_RSP] = (greg_t)(top - 8);
	raw_ctx.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)raw_entry;
	for (int r = 0; r <= ROUNDS; r++) {
		swapcontext(&main_ctx, &raw_ctx);
		printf("main: back from the raw coroutine, %d rounds seen\n", rounds_seen);
	}
	return 0;
}

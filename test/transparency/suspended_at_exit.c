/* Coroutines still suspended when the program ends: the tracer unwinds their saved contexts at
 * the end (preload/unwind_saved.c), which must change nothing the program can see, even where a
 * suspended coroutine's stack or saved context was unmapped under it. Also prints what the
 * tracer's PR_SET_PTRACER (only under Yama scope 1) could touch: dumpable, TracerPid.
 *
 * Usage: suspended_at_exit HOW, HOW = return (from main), exit (in a coroutine), _exit (3), or
 * kill: SIGKILL, with no chance to unwind anything at the end, once standard input has ended
 * (after it printed "ready": the test ends it once the collector has read the stacks of the
 * suspended coroutines from the live process) and 3.1 s have passed: the test asks for 3 s
 * between the last switch and the end, and the switch's time comes from the TSC, scaled, the
 * end's from the collector's clock, which may disagree by some microseconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "fcontext_abi.h"

enum { STACK = 64 * 1024, UCOROS = 3 };

static ucontext_t main_ctx, co_ctx[UCOROS];
static ucontext_t *gone_ctx; /* a saved context on a page that is unmapped later */
static const char *how;

/* Suspends at the same point for ever: from the second time on, a switch records only its
 * call site, and the whole stack comes from the saved context. */
__attribute__((noinline)) static void park_deep(int i)
{
	ucontext_t *self = i == 2 ? gone_ctx : &co_ctx[i];
	for (;;)
		swapcontext(self, &main_ctx);
}

__attribute__((noinline)) static void co_waiter(void)
{
	park_deep(0);
}

__attribute__((noinline)) static void co_unmapped_stack(void)
{
	park_deep(1);
}

__attribute__((noinline)) static void co_unmapped_context(void)
{
	park_deep(2);
}

__attribute__((noinline)) static void fiber_parked(transfer_t t)
{
	for (;;)
		t = jump_fcontext(t.fctx, NULL);
}

__attribute__((noinline)) static void co_exits(void)
{
	fflush(stdout);
	exit(7);
}

static void *stack_alloc(void)
{
	void *p = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void start(ucontext_t *ctx, void *stack, void (*fn)(void))
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = STACK;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 0);
	swapcontext(&main_ctx, ctx);
}

int main(int argc, char **argv)
{
	how = argc > 1 ? argv[1] : "return";
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));

	void *stacks[UCOROS];
	for (int i = 0; i < UCOROS; i++)
		stacks[i] = stack_alloc();
	gone_ctx = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone_ctx == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	start(&co_ctx[0], stacks[0], co_waiter);
	start(&co_ctx[1], stacks[1], co_unmapped_stack);
	start(&co_ctx[2], stacks[2], co_unmapped_context);
	for (int i = 0; i < UCOROS; i++) /* a second suspend, at the same point */
		swapcontext(&main_ctx, i == 2 ? gone_ctx : &co_ctx[i]);

	void *fstack = stack_alloc();
	fcontext_t f = make_fcontext((char *)fstack + STACK, STACK, fiber_parked);
	f = jump_fcontext(f, NULL).fctx;
	f = jump_fcontext(f, NULL).fctx;

	/* Taken away under suspended coroutines: the tracer must not read through them. */
	munmap(stacks[1], STACK);
	munmap(gone_ctx, 4096);
	puts("three ucontext coroutines and a fiber suspended");

	FILE *st = fopen("/proc/self/status", "r");
	char line[256];
	while (st && fgets(line, sizeof(line), st))
		if (strncmp(line, "TracerPid:", 10) == 0)
			fputs(line, stdout);
	if (st)
		fclose(st);
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));

	if (strcmp(how, "_exit") == 0)
		_exit(3);
	if (strcmp(how, "kill") == 0) {
		struct timespec since, now;
		clock_gettime(CLOCK_MONOTONIC, &since);
		puts("ready");
		fflush(stdout);
		char byte;
		while (read(0, &byte, 1) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long waited_ms = (now.tv_sec - since.tv_sec) * 1000 +
				 (now.tv_nsec - since.tv_nsec) / 1000000;
		if (waited_ms < 3100)
			usleep((useconds_t)(3100 - waited_ms) * 1000);
		raise(SIGKILL);
	}
	if (strcmp(how, "exit") == 0) {
		static ucontext_t exiter;
		start(&exiter, stack_alloc(), co_exits);
	}
	return 0;
}

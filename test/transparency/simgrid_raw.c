/* SimGrid's raw contexts, called as libsimgrid's RawContext calls them: raw_makecontext on a
 * malloc'd stack, raw_swapcontext to switch, each context's entry never returning. Two
 * coroutines ping-pong with main ROUNDS times each; then `finished` switches away for good and
 * main frees its stack, while `parked` suspends in parked_in_leaf() at a place it suspended at
 * before, and main waits (the collector then unwinds that suspend from its saved raw context)
 * and leaves it suspended at the exit (the tracer's last pass unwinds it again), or kills itself
 * (nothing runs at the end: the stack is the collector's alone). Before the kill it prints
 * "ready" and waits for its standard input to end: the test ends it once the collector has
 * written that stack.
 *
 *   simgrid_raw [SLEEP_MS [kill]]   (default 0) */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* libsimgrid's exported raw context functions (x86-64). */
extern void *raw_makecontext(void *stack, int size, void (*entry)(void *), void *arg);
extern void raw_swapcontext(void **old, void *to);

enum { STACK = 64 * 1024, ROUNDS = 50 };

static void *main_ctx, *finished_ctx, *parked_ctx;
static int finished_turns, parked_turns;

static void finished_body(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		finished_turns++;
		raw_swapcontext(&finished_ctx, main_ctx);
	}
	/* Done: away for good, as a SimGrid actor whose code returned. */
	raw_swapcontext(&finished_ctx, main_ctx);
	abort(); /* never resumed */
}

static __attribute__((noinline)) void parked_in_leaf(void)
{
	parked_turns++;
	raw_swapcontext(&parked_ctx, main_ctx);
	__asm__ volatile("" ::: "memory"); /* a frame of its own, not a tail call */
}

static void parked_body(void *arg)
{
	(void)arg;
	for (;;)
		parked_in_leaf();
}

int main(int argc, char **argv)
{
	long sleep_ms = argc > 1 ? atol(argv[1]) : 0;
	char *finished_stack = malloc(STACK), *parked_stack = malloc(STACK);
	if (!finished_stack || !parked_stack)
		return 2;
	finished_ctx = raw_makecontext(finished_stack, STACK, finished_body, NULL);
	parked_ctx = raw_makecontext(parked_stack, STACK, parked_body, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		raw_swapcontext(&main_ctx, finished_ctx);
		raw_swapcontext(&main_ctx, parked_ctx);
	}
	raw_swapcontext(&main_ctx, finished_ctx); /* its last switch */
	free(finished_stack);
	raw_swapcontext(&main_ctx, parked_ctx); /* parked again, where it was before */
	struct timespec pause = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000};
	nanosleep(&pause, NULL);
	printf("finished %d, parked %d\n", finished_turns, parked_turns);
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "kill") == 0) {
		puts("ready");
		fflush(stdout);
		char byte;
		while (read(0, &byte, 1) > 0)
			;
		raise(SIGKILL);
	}
	return 0;
}

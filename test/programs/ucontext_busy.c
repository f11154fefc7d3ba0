/* Keeps switching between 4 coroutines for a while, for the robustness tests: kill the
 * collector or the app in the middle, run two at once.
 *
 * Prints "socket PATH" (its CTP_SOCKET, "-" if none) and "started" once every coroutine has
 * run, then after MILLISECONDS "done switches N", and exits with EXIT_STATUS. Lines are flushed
 * at once: the tests wait for them. MILLISECONDS 0: until standard input ends, so that a test
 * can do what it must during the run, then let it end.
 *
 *   ucontext_busy MILLISECONDS EXIT_STATUS */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define NCOROS 4
#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, ctx[NCOROS];
static char stacks[NCOROS][STACK_SIZE];
static long switches;

static void spin(int self)
{
	for (;;) {
		switches++;
		swapcontext(&ctx[self], &main_ctx);
	}
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether the run is over: MILLISECONDS have passed, or, with none given, standard input has
 * ended (looked at every 64 rounds). */
static bool over(long round, long end)
{
	if (end)
		return now_ms() >= end;
	if (round % 64)
		return false;
	struct pollfd p = {.fd = 0, .events = POLLIN};
	char byte;
	return poll(&p, 1, 0) == 1 && read(0, &byte, 1) <= 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ucontext_busy MILLISECONDS EXIT_STATUS\n");
		return 2;
	}
	long ms = atol(argv[1]);
	int status = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *sock = getenv("CTP_SOCKET");
	printf("socket %s\n", sock ? sock : "-");
	for (int i = 0; i < NCOROS; i++) {
		getcontext(&ctx[i]);
		ctx[i].uc_stack.ss_sp = stacks[i];
		ctx[i].uc_stack.ss_size = STACK_SIZE;
		ctx[i].uc_link = &main_ctx;
		makecontext(&ctx[i], (void (*)(void))spin, 1, i);
	}
	long end = ms ? now_ms() + ms : 0;
	for (long round = 0; round == 0 || !over(round, end); round++) {
		for (int i = 0; i < NCOROS; i++) {
			switches++;
			swapcontext(&main_ctx, &ctx[i]);
		}
		if (round == 0)
			printf("started\n");
	}
	printf("done switches %ld\n", switches);
	return status;
}

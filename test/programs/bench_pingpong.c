/* Benchmark: two ucontext coroutines switching flat out. Times its own loop (not start-up) and
 * prints `switches=N ns_per_switch=X cpu_s=Y`. Usage: bench_pingpong ROUNDS | --seconds S */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <ucontext.h>

static ucontext_t main_ctx, co_ctx;
/* File scope: swapcontext returns twice, so locals live across it could be clobbered. */
static long rounds = 1000000;
static double seconds;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bounce(void)
{
	for (;;)
		swapcontext(&co_ctx, &main_ctx);
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--seconds") == 0)
		seconds = atof(argv[2]);
	else if (argc > 1)
		rounds = atol(argv[1]);
	static char stack[64 * 1024];
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	makecontext(&co_ctx, bounce, 0);
	swapcontext(&main_ctx, &co_ctx); /* first entry, outside the timed loop */

	long done = 0;
	double t0 = now(), t1;
	if (seconds > 0) {
		do {
			for (int i = 0; i < 1000; i++)
				swapcontext(&main_ctx, &co_ctx);
			done += 1000;
		} while ((t1 = now()) - t0 < seconds);
	} else {
		for (; done < rounds; done++)
			swapcontext(&main_ctx, &co_ctx);
		t1 = now();
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		     ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
	/* Each round is two switches; plus the first entry. */
	printf("switches=%ld ns_per_switch=%.2f cpu_s=%.3f\n", 2 * done + 1,
	       (t1 - t0) / (2.0 * (double)done) * 1e9, cpu);
	return 0;
}

/* More records than a collector on a small machine can take in: THREADS threads, each
 * switching between its main context and a coroutine of its own as fast as swapcontext goes,
 * for MILLISECONDS. Prints how many switches they made in all (every swapcontext), so that a
 * test can compare the trace's switch lines plus its loss counts with the truth.
 *
 *   pingpong_threads THREADS MILLISECONDS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

enum { MAX_THREADS = 64, STACK_SIZE = 64 * 1024 };

struct pingpong {
	ucontext_t main_ctx, pong_ctx;
	char stack[STACK_SIZE];
	long switches;
};

static long duration_ms;
static __thread struct pingpong *mine; /* the coroutine finds its thread's pair here */

static void pong(void)
{
	for (;;) {
		mine->switches++;
		swapcontext(&mine->pong_ctx, &mine->main_ctx);
	}
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *run(void *arg)
{
	struct pingpong *p = arg;
	mine = p;
	getcontext(&p->pong_ctx);
	p->pong_ctx.uc_stack.ss_sp = p->stack;
	p->pong_ctx.uc_stack.ss_size = sizeof(p->stack);
	p->pong_ctx.uc_link = NULL; /* pong never returns */
	makecontext(&p->pong_ctx, pong, 0);
	long end = now_ms() + duration_ms;
	while (now_ms() < end) {
		for (int i = 0; i < 1000; i++) {
			p->switches++;
			swapcontext(&p->main_ctx, &p->pong_ctx);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[1]) : 0;
	duration_ms = argc > 2 ? atol(argv[2]) : 0;
	if (threads < 1 || threads > MAX_THREADS || duration_ms < 1) {
		fprintf(stderr, "usage: pingpong_threads THREADS(1-%d) MILLISECONDS\n",
			MAX_THREADS);
		return 2;
	}
	static struct pingpong pairs[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, run, &pairs[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	long switches = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		switches += pairs[i].switches;
	}
	printf("switches %ld\n", switches);
	return 0;
}

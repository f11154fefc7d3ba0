/* Threads that start together and make coroutines at once: each first traced call of a thread
 * allocates its ring, and each thread's coroutines need station chunks, all from the one segment,
 * under its growth lock. 64 threads released by one barrier each make 40 coroutines (on stacks
 * of their own), run each twice (its start, one resume) and let it return. Untraced and traced
 * alike the program prints its count of runs; traced, every thread and coroutine must be in the
 * trace, each coroutine with its own switches. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { THREADS = 64, COROS = 40, STACK = 32 * 1024 };

static pthread_barrier_t start;
static int runs;

struct worker {
	ucontext_t main_ctx, ctx[COROS];
	int current;
};

static __thread struct worker *self;

static void body(void)
{
	struct worker *w = self;
	int me = w->current;
	__atomic_fetch_add(&runs, 1, __ATOMIC_RELAXED);
	swapcontext(&w->ctx[me], &w->main_ctx);
	__atomic_fetch_add(&runs, 1, __ATOMIC_RELAXED);
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	self = w;
	pthread_barrier_wait(&start);
	for (int i = 0; i < COROS; i++) {
		void *stack = malloc(STACK);
		if (!stack)
			abort();
		getcontext(&w->ctx[i]);
		w->ctx[i].uc_stack.ss_sp = stack;
		w->ctx[i].uc_stack.ss_size = STACK;
		w->ctx[i].uc_link = &w->main_ctx;
		makecontext(&w->ctx[i], body, 0);
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < COROS; i++) {
			w->current = i;
			swapcontext(&w->main_ctx, &w->ctx[i]);
		}
	for (int i = 0; i < COROS; i++)
		free(w->ctx[i].uc_stack.ss_sp);
	return NULL;
}

int main(void)
{
	static pthread_t threads[THREADS];
	static struct worker workers[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], NULL, thread_main, &workers[i]) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	printf("%d threads, %d coroutines, %d runs\n", THREADS, THREADS * COROS, runs);
	return 0;
}

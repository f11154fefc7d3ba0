/* Threads that switch coroutines under an address-space limit (ulimit -v), then a large mapping
 * of the program's own: four threads each switch a coroutine of theirs in and out (the tracer
 * walks its stack at its first suspend), wait until all have, and main then maps 448 MiB and
 * exits 0 ("mapped 448 MiB"), or 3 when the mapping fails. Untraced the threads never call
 * malloc and cost their stacks alone; traced, libunwind's thread-local cache gave each a
 * malloc arena of 64 MiB of address space at its first walk, and under a limit of 683 MiB the
 * program's own mapping failed. */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "tp_coro.h"

enum { THREADS = 4, ROUNDS = 50, BIG_MIB = 448 };

struct worker {
	pthread_t thread;
	ucontext_t self, coro;
	char stack[64 * 1024];
};

static pthread_barrier_t switched;
static struct worker workers[THREADS];

static void coro_body(void)
{
	struct worker *w = NULL;
	for (int i = 0; i < THREADS; i++)
		if (pthread_equal(workers[i].thread, pthread_self()))
			w = &workers[i];
	for (;;)
		swapcontext(&w->coro, &w->self);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	if (getcontext(&w->coro) != 0)
		exit(2);
	w->coro.uc_stack.ss_sp = w->stack;
	w->coro.uc_stack.ss_size = sizeof(w->stack);
	w->coro.uc_link = NULL;
	makecontext(&w->coro, coro_body, 0);
	for (int i = 0; i < ROUNDS; i++)
		swapcontext(&w->self, &w->coro);
	pthread_barrier_wait(&switched);
	pthread_barrier_wait(&switched);
	return NULL;
}

int main(void)
{
	tp_touch_coroutine();
	pthread_barrier_init(&switched, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) {
			perror("pthread_create");
			return 2;
		}
	pthread_barrier_wait(&switched);
	size_t big = (size_t)BIG_MIB << 20;
	void *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	if (p == MAP_FAILED) {
		printf("mmap of %d MiB: %s\n", BIG_MIB, strerror(errno));
		status = 3;
	} else {
		printf("mapped %d MiB\n", BIG_MIB);
		munmap(p, big);
	}
	pthread_barrier_wait(&switched);
	for (int i = 0; i < THREADS; i++)
		pthread_join(workers[i].thread, NULL);
	return status;
}

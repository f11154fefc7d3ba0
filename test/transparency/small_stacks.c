/* Coroutines on small stacks that suspend deep in them, on several threads. Each coroutine runs
 * on an 8 KiB mmap'ed stack with a PROT_NONE guard page below, recurses through about 5 KiB, and
 * then suspends with swapcontext at three call sites: the first suspend at each is one the
 * tracer unwinds whole. That walk needs more stack than is left here; it must run elsewhere
 * and leave the coroutine's stack alone. Two rounds of threads: each thread's walk stack is
 * made at its first walk and given back at its exit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

enum {
	PAGE = 4096,
	STACK = 8192,
	DEPTH = 18,
	FRAME_BYTES = 256,
	COROS = 4,
	THREADS = 3,
	ROUNDS = 2,
};

struct coro {
	ucontext_t ctx;
	ucontext_t *back;
	char *map;
	long sum;
	int done;
};

static __attribute__((noinline)) void suspend_a(struct coro *c)
{
	swapcontext(&c->ctx, c->back);
}

static __attribute__((noinline)) void suspend_b(struct coro *c)
{
	swapcontext(&c->ctx, c->back);
}

static __attribute__((noinline)) void suspend_c(struct coro *c)
{
	swapcontext(&c->ctx, c->back);
}

static __attribute__((noinline)) long descend(struct coro *c, int level)
{
	volatile char frame[FRAME_BYTES];
	for (int i = 0; i < FRAME_BYTES; i++)
		frame[i] = (char)(level + i);
	if (level == DEPTH) {
		suspend_a(c);
		suspend_b(c);
		suspend_c(c);
		suspend_a(c);
		return frame[1];
	}
	return descend(c, level + 1) + frame[level % FRAME_BYTES];
}

static __thread struct coro *current_start; /* the coroutine entry() starts */

static void entry(void)
{
	struct coro *c = current_start;
	c->sum = descend(c, 1);
	c->done = 1;
}

static void coro_make(struct coro *c, ucontext_t *back)
{
	c->map = mmap(NULL, PAGE + STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (c->map == MAP_FAILED || mprotect(c->map, PAGE, PROT_NONE) != 0) {
		perror("mmap");
		exit(2);
	}
	if (getcontext(&c->ctx) != 0) {
		perror("getcontext");
		exit(2);
	}
	c->ctx.uc_stack.ss_sp = c->map + PAGE;
	c->ctx.uc_stack.ss_size = STACK;
	c->ctx.uc_link = back;
	c->back = back;
	c->done = 0;
	makecontext(&c->ctx, entry, 0);
}

static void *thread_main(void *arg)
{
	long id = (long)arg;
	ucontext_t main_ctx;
	struct coro coros[COROS];
	long total = 0;
	for (int i = 0; i < COROS; i++)
		coro_make(&coros[i], &main_ctx);
	/* Round robin until every coroutine returned. */
	for (int left = COROS; left > 0;) {
		left = 0;
		for (int i = 0; i < COROS; i++) {
			struct coro *c = &coros[i];
			if (c->done)
				continue;
			current_start = c;
			swapcontext(&main_ctx, &c->ctx);
			left += !c->done;
		}
	}
	for (int i = 0; i < COROS; i++) {
		total += coros[i].sum;
		munmap(coros[i].map, PAGE + STACK);
	}
	return (void *)(total + id);
}

int main(void)
{
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t th[THREADS];
		for (long i = 0; i < THREADS; i++)
			if (pthread_create(&th[i], NULL, thread_main, (void *)i) != 0) {
				perror("pthread_create");
				return 2;
			}
		for (int i = 0; i < THREADS; i++) {
			void *r;
			pthread_join(th[i], &r);
			printf("round %d thread %d: %ld\n", round, i, (long)r);
		}
	}
	return 0;
}

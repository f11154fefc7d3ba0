/* An M:N scheduler: COROS ucontext coroutines on WORKERS threads. A shared run queue under a
 * mutex; each worker thread has its own scheduler context on its own stack, takes a coroutine
 * from the queue, resumes it, and queues it again when it yields. A worker never takes the
 * coroutine it ran last (another one does), so every coroutine moves to another thread at each
 * resume, however the threads happen to be scheduled: with a queue free for all, one worker that
 * kept a CPU to itself on a busy machine once ran every coroutine alone, and nothing migrated. A
 * coroutine ends with setcontext to the scheduler of the thread it ends on (uc_link cannot be used:
 * it would name one thread's scheduler for good).
 *
 * Prints "switches N", every context switch it made (resumes, yields and ends), which the trace
 * must account for exactly, and "migrated N", the coroutines that ran on more than one thread.
 *
 *   ucontext_mn [COROS [YIELDS]]   (defaults 30 and 200) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define WORKERS 3
#define STACK_SIZE (64 * 1024)

struct worker {
	ucontext_t sched;
	int index;
};

struct coro {
	ucontext_t ctx;
	struct worker *worker; /* the worker running it now, set before every resume */
	unsigned ran_on;       /* one bit per worker it ran on */
	bool done;
	struct coro *next;
};

static struct worker workers[WORKERS];
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static struct coro *queue_head, *queue_tail; /* under queue_lock */
static int live;			     /* coroutines not ended, under queue_lock */
static atomic_long switches;
static int yields_per_coro;

static void push_locked(struct coro *c)
{
	c->next = NULL;
	if (queue_tail)
		queue_tail->next = c;
	else
		queue_head = c;
	queue_tail = c;
	pthread_cond_broadcast(&queue_cond);
}

/* The next runnable coroutine for worker w, in queue order, one that w did not run last; NULL
 * once every coroutine has ended. Waits while the queue holds only w's own last one: another
 * worker takes that (each push and each take wakes every waiting worker to look again). */
static struct coro *pop(struct worker *w)
{
	pthread_mutex_lock(&queue_lock);
	struct coro *c;
	for (;;) {
		while (queue_head == NULL && live > 0)
			pthread_cond_wait(&queue_cond, &queue_lock);
		c = queue_head;
		if (!c || c->worker != w)
			break;
		pthread_cond_wait(&queue_cond, &queue_lock);
	}
	if (c) {
		queue_head = c->next;
		if (queue_head == NULL)
			queue_tail = NULL;
		pthread_cond_broadcast(&queue_cond);
	}
	pthread_mutex_unlock(&queue_lock);
	return c;
}

/* Back to the worker that runs this coroutine now: after the swap it may be another one. */
static void yield(struct coro *c)
{
	atomic_fetch_add(&switches, 1);
	swapcontext(&c->ctx, &c->worker->sched);
}

static void work(unsigned hi, unsigned lo)
{
	struct coro *c = (struct coro *)(((uintptr_t)hi << 32) | lo);
	for (int i = 0; i < yields_per_coro; i++)
		yield(c);
	c->done = true;
	atomic_fetch_add(&switches, 1);
	setcontext(&c->worker->sched);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct coro *c;
	while ((c = pop(w)) != NULL) {
		c->worker = w;
		c->ran_on |= 1u << w->index;
		atomic_fetch_add(&switches, 1);
		swapcontext(&w->sched, &c->ctx);
		/* It yielded or ended; its context is saved, another worker may take it now. */
		pthread_mutex_lock(&queue_lock);
		if (!c->done)
			push_locked(c);
		else if (--live == 0)
			pthread_cond_broadcast(&queue_cond);
		pthread_mutex_unlock(&queue_lock);
	}
	return NULL;
}

/* Makes the coroutine and queues it (in a function of its own: a getcontext in main's loop
 * would make the loop variable a setjmp-clobbered one). */
static bool spawn(struct coro *c)
{
	getcontext(&c->ctx);
	c->ctx.uc_stack.ss_sp = malloc(STACK_SIZE);
	c->ctx.uc_stack.ss_size = STACK_SIZE;
	c->ctx.uc_link = NULL;
	if (!c->ctx.uc_stack.ss_sp)
		return false;
	uintptr_t p = (uintptr_t)c;
	makecontext(&c->ctx, (void (*)(void))work, 2, (unsigned)(p >> 32), (unsigned)p);
	push_locked(c);
	live++;
	return true;
}

int main(int argc, char **argv)
{
	int ncoros = argc > 1 ? atoi(argv[1]) : 30;
	yields_per_coro = argc > 2 ? atoi(argv[2]) : 200;
	struct coro *coros = calloc((size_t)ncoros, sizeof(*coros));
	if (!coros)
		return 1;
	for (int i = 0; i < ncoros; i++)
		if (!spawn(&coros[i]))
			return 1;
	pthread_t threads[WORKERS];
	for (int i = 0; i < WORKERS; i++) {
		workers[i].index = i;
		if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0)
			return 1;
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);
	int migrated = 0;
	for (int i = 0; i < ncoros; i++) {
		migrated += __builtin_popcount(coros[i].ran_on) > 1;
		free(coros[i].ctx.uc_stack.ss_sp);
	}
	free(coros);
	printf("switches %ld\nmigrated %d\n", atomic_load(&switches), migrated);
	return 0;
}

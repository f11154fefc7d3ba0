/* An M:N scheduler with stuck coroutines, for the dashboard's tests: WORKERS threads run COROS
 * ucontext coroutines from one shared run queue, so a coroutine may resume on another thread
 * than the one it suspended on. Every fourth coroutine parks in wait_for_reply() after its first
 * rounds and is never resumed again: at exit it is stuck, suspended with wait_for_reply on its
 * stack. The others yield ROUNDS times and return.
 *
 * A coroutine must return to the thread that resumed it last, so each resume saves the worker's
 * context into the coroutine's own `caller`, and uc_link points there: returning through
 * uc_link then lands on the right thread whichever it is.
 *
 * Prints "stuck N finished M".
 *
 *   mn_stuck [COROS [ROUNDS]]   (defaults 12 and 20) */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

#define WORKERS 2
#define STACK_SIZE (64 * 1024)
#define ROUNDS_BEFORE_PARKING 2

enum coro_state { READY, PARKED, DONE };

struct coro {
	ucontext_t ctx;
	ucontext_t caller; /* the worker that resumed it last: where yields and the return go */
	enum coro_state state;
	int index;
	struct coro *next;
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static struct coro *queue_head, *queue_tail; /* under queue_lock */
static int live;			     /* neither parked nor done, under queue_lock */
static int parked, finished;		     /* under queue_lock */
static int rounds;
static int reply_pipe[2];	      /* nobody ever writes to it: the reply never comes */
static pthread_barrier_t all_started; /* the workers and main: work begins once all run */

static void push_locked(struct coro *c)
{
	c->next = NULL;
	if (queue_tail)
		queue_tail->next = c;
	else
		queue_head = c;
	queue_tail = c;
}

static struct coro *pop_locked(void)
{
	struct coro *c = queue_head;
	if (c) {
		queue_head = c->next;
		if (!queue_head)
			queue_tail = NULL;
	}
	return c;
}

static void yield(struct coro *self)
{
	swapcontext(&self->ctx, &self->caller);
}

/* Waits for a reply that never comes: the read finds nothing, the coroutine parks, and no one
 * resumes it. This is the frame the dashboard must show for the stuck group. */
static void wait_for_reply(struct coro *self)
{
	char byte;
	if (read(reply_pipe[0], &byte, 1) < 0 && errno == EAGAIN) {
		self->state = PARKED;
		yield(self);
	}
}

static void work(unsigned long arg)
{
	struct coro *self = (struct coro *)arg;
	for (int i = 0; i < rounds; i++) {
		if (self->index % 4 == 0 && i == ROUNDS_BEFORE_PARKING)
			wait_for_reply(self);
		yield(self);
	}
	self->state = DONE;
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_started);
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		struct coro *c;
		while (!(c = pop_locked()) && live > 0)
			pthread_cond_wait(&queue_cond, &queue_lock);
		if (!c)
			break;
		pthread_mutex_unlock(&queue_lock);
		swapcontext(&c->caller, &c->ctx);
		pthread_mutex_lock(&queue_lock);
		if (c->state == READY) {
			push_locked(c);
			pthread_cond_signal(&queue_cond);
		} else {
			live--;
			if (c->state == PARKED)
				parked++;
			else
				finished++;
			if (live == 0)
				pthread_cond_broadcast(&queue_cond);
		}
	}
	pthread_mutex_unlock(&queue_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int ncoros = argc > 1 ? atoi(argv[1]) : 12;
	rounds = argc > 2 ? atoi(argv[2]) : 20;
	if (ncoros < 1 || rounds <= ROUNDS_BEFORE_PARKING) {
		fprintf(stderr, "usage: mn_stuck [COROS [ROUNDS > %d]]\n", ROUNDS_BEFORE_PARKING);
		return 2;
	}
	if (pipe2(reply_pipe, O_NONBLOCK) < 0) {
		perror("pipe2");
		return 1;
	}
	struct coro *coros = calloc((size_t)ncoros, sizeof(*coros));
	if (!coros)
		return 1;
	for (int i = 0; i < ncoros; i++) {
		struct coro *c = &coros[i];
		c->index = i;
		getcontext(&c->ctx);
		c->ctx.uc_stack.ss_sp = malloc(STACK_SIZE);
		c->ctx.uc_stack.ss_size = STACK_SIZE;
		c->ctx.uc_link = &c->caller;
		if (!c->ctx.uc_stack.ss_sp)
			return 1;
		makecontext(&c->ctx, (void (*)(void))work, 1, (unsigned long)c);
		push_locked(c);
	}
	live = ncoros;

	/* Every worker is running before the first coroutine is taken, so that all of them
	 * share the work from the start. */
	pthread_barrier_init(&all_started, NULL, WORKERS + 1);
	pthread_t threads[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&threads[i], NULL, worker_main, NULL) != 0)
			return 1;
	pthread_barrier_wait(&all_started);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);
	printf("stuck %d finished %d\n", parked, finished);
	return 0;
}

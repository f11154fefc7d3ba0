#define _GNU_SOURCE
#include "sched.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#define STACK_SIZE (64 * 1024)
#define MAX_WORKERS 8

enum coro_state { RUNNABLE, PARKING, PARKED, DONE };

struct coro {
	ucontext_t ctx;
	ucontext_t *sched; /* the scheduler context of the worker running it now */
	void (*fn)(struct coro *c, void *arg);
	void *arg;
	void *stack;
	enum coro_state state;
	int wait_fd;
	int wake_error;
	bool registered; /* wait_fd is in the epoll set */
	struct coro *next;
};

struct worker {
	ucontext_t sched;
	pthread_t thread;
};

static struct worker workers[MAX_WORKERS];
static int nworkers;
static enum hangup_policy hangup;
static int epfd = -1;
static char listener_key; /* epoll data for the listening socket */

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static struct coro *queue_head, *queue_tail;
static bool stopping;

static atomic_int parked, connections, stranded;
static atomic_bool stop_requested;

int sched_stranded(void)
{
	return atomic_load(&stranded);
}

int sched_parked(void)
{
	return atomic_load(&parked);
}

void sched_connection_opened(void)
{
	atomic_fetch_add(&connections, 1);
}

void sched_connection_closed(void)
{
	atomic_fetch_sub(&connections, 1);
}

int sched_connections(void)
{
	return atomic_load(&connections);
}

static void make_runnable(struct coro *c)
{
	pthread_mutex_lock(&queue_lock);
	c->state = RUNNABLE;
	c->next = NULL;
	if (queue_tail)
		queue_tail->next = c;
	else
		queue_head = c;
	queue_tail = c;
	pthread_cond_signal(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
}

static struct coro *next_runnable(void)
{
	pthread_mutex_lock(&queue_lock);
	while (!queue_head && !stopping)
		pthread_cond_wait(&queue_cond, &queue_lock);
	struct coro *c = queue_head;
	if (c) {
		queue_head = c->next;
		if (!queue_head)
			queue_tail = NULL;
	}
	pthread_mutex_unlock(&queue_lock);
	return c;
}

static void coro_entry(unsigned hi, unsigned lo)
{
	struct coro *c = (struct coro *)(((uintptr_t)hi << 32) | lo);
	c->fn(c, c->arg);
	sched_exit(c);
}

/* In a function of its own: getcontext returns twice, and no local of the caller may live
 * across it. */
static void make_context(struct coro *c)
{
	getcontext(&c->ctx);
	c->ctx.uc_stack.ss_sp = c->stack;
	c->ctx.uc_stack.ss_size = STACK_SIZE;
	c->ctx.uc_link = NULL; /* never returns: sched_exit goes back to whichever worker */
	uintptr_t p = (uintptr_t)c;
	makecontext(&c->ctx, (void (*)(void))coro_entry, 2, (unsigned)(p >> 32), (unsigned)p);
}

struct coro *sched_spawn(void (*fn)(struct coro *c, void *arg), void *arg)
{
	struct coro *c = calloc(1, sizeof(*c));
	if (!c || !(c->stack = malloc(STACK_SIZE))) {
		free(c);
		return NULL;
	}
	c->fn = fn;
	c->arg = arg;
	c->wait_fd = -1;
	make_context(c);
	make_runnable(c);
	return c;
}

int sched_wait_readable(struct coro *c, int fd)
{
	c->wait_fd = fd;
	c->wake_error = 0;
	c->state = PARKING;
	/* The worker arms the fd once this context is saved: the poller can never resume a
	 * coroutine that is still running. */
	swapcontext(&c->ctx, c->sched);
	c->wait_fd = -1;
	if (c->wake_error) {
		errno = c->wake_error;
		return -1;
	}
	return 0;
}

void sched_exit(struct coro *c)
{
	c->state = DONE;
	setcontext(c->sched);
	abort();
}

/* The coroutine has switched away to park: add its fd to the epoll set, one event only. */
static void arm(struct coro *c)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c};
	c->state = PARKED;
	atomic_fetch_add(&parked, 1);
	int op = c->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	c->registered = true;
	if (epoll_ctl(epfd, op, c->wait_fd, &ev) != 0) {
		perror("epoll_ctl");
		abort();
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct coro *c;
	while ((c = next_runnable()) != NULL) {
		c->sched = &w->sched;
		swapcontext(&w->sched, &c->ctx);
		if (c->state == DONE) {
			free(c->stack);
			free(c);
		} else if (c->state == PARKING) {
			arm(c);
		}
	}
	return NULL;
}

int sched_start(int n, enum hangup_policy policy)
{
	hangup = policy;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -1;
	nworkers = n < MAX_WORKERS ? n : MAX_WORKERS;
	for (int i = 0; i < nworkers; i++)
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0)
			return -1;
	return 0;
}

/* THE BUG. The peer hung up or reset while a coroutine was parked reading: the connection is
 * dead, so it is closed and forgotten here — but the coroutine parked on it is never resumed.
 * It stays suspended for good, with its stack, and whatever it holds. */
static void poller_drop_connection(struct coro *c)
{
	int fd = c->wait_fd;
	atomic_fetch_add(&stranded, 1);
	printf("stranded fd %d\n", fd);
	fflush(stdout);
	close(fd);
	sched_connection_closed();
}

/* The fix: the coroutine that waits on the fd learns of the hang-up from its wait, and closes
 * the fd itself on its way out. */
static void poller_wake_with_error(struct coro *c)
{
	c->wake_error = ECONNRESET;
	make_runnable(c);
}

static void accept_all(int listen_fd, void (*on_accept)(int fd))
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN: all taken */
		sched_connection_opened();
		on_accept(fd);
	}
}

void sched_poll(int listen_fd, void (*on_accept)(int fd))
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listener_key};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev) != 0) {
		perror("epoll_ctl");
		abort();
	}
	struct epoll_event events[64];
	while (!atomic_load(&stop_requested)) {
		int n = epoll_wait(epfd, events, 64, 100);
		for (int i = 0; i < n; i++) {
			if (events[i].data.ptr == &listener_key) {
				accept_all(listen_fd, on_accept);
				continue;
			}
			struct coro *c = events[i].data.ptr;
			atomic_fetch_sub(&parked, 1);
			if (!(events[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
				make_runnable(c);
			else if (hangup == HANGUP_DROP)
				poller_drop_connection(c);
			else
				poller_wake_with_error(c);
		}
	}
	pthread_mutex_lock(&queue_lock);
	stopping = true;
	pthread_cond_broadcast(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
}

void sched_stop(void)
{
	atomic_store(&stop_requested, true);
}

/* A small M:N scheduler on glibc ucontext, the kind a network server grows by itself: worker
 * threads take runnable coroutines from one queue and run them; the main thread polls one epoll
 * set and makes coroutines runnable again when their fd is ready. A coroutine that would block
 * parks on its fd (sched_wait_readable) and is resumed by the poller. */
#ifndef LOST_WAKEUP_SCHED_H
#define LOST_WAKEUP_SCHED_H

#include <stdbool.h>

struct coro;

/* How the poller treats a hang-up or reset on a parked coroutine's fd. */
enum hangup_policy {
	HANGUP_DROP,	  /* the bug: close the fd and forget the connection */
	HANGUP_WAKE_ERROR /* the fix: resume the coroutine, its wait fails with ECONNRESET */
};

/* Starts `workers` worker threads. */
int sched_start(int workers, enum hangup_policy policy);

/* Makes a coroutine that runs fn(c, arg) and queues it. NULL when out of memory. */
struct coro *sched_spawn(void (*fn)(struct coro *c, void *arg), void *arg);

/* Parks the calling coroutine until `fd` is readable. 0 when it is, -1 with errno when the
 * scheduler woke it with an error instead. */
int sched_wait_readable(struct coro *c, int fd);

/* Ends the calling coroutine; never returns. */
void sched_exit(struct coro *c) __attribute__((noreturn));

/* The poller, on the calling thread: accepts connections on `listen_fd` (non-blocking) and
 * hands each to on_accept, until sched_stop(); then stops the workers. */
void sched_poll(int listen_fd, void (*on_accept)(int fd));
void sched_stop(void);

/* Coroutines parked on an fd now; connections the scheduler has not dropped. */
int sched_parked(void);
void sched_connection_opened(void);
void sched_connection_closed(void);
int sched_connections(void);
/* Coroutines left parked on an fd the scheduler closed (the bug). */
int sched_stranded(void);

#endif

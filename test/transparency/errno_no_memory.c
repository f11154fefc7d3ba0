/* errno when memory runs out. A second thread is started and parked; then the address space is
 * limited to what the program has mapped plus 32 KiB, and the thread makes a coroutine,
 * switches to it and back, and to a new place in it. Traced, its first stack walks want a walk
 * stack of the thread's own (preload/walk_stack.c), which cannot be mapped now: the switches
 * still work and errno stays the sentinel each time. The program's own big allocation fails
 * alike, traced or not. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <ucontext.h>

#include "tp_coro.h"

enum { SENTINEL = 4242 };

static ucontext_t worker_ctx, co_ctx;
static char co_stack[64 * 1024];
static pthread_barrier_t limited;

static void co_body(void)
{
	errno = SENTINEL;
	swapcontext(&co_ctx, &worker_ctx);
	errno = SENTINEL;
	swapcontext(&co_ctx, &worker_ctx); /* another place: another first walk */
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&limited);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &worker_ctx;
	errno = SENTINEL;
	makecontext(&co_ctx, co_body, 0);
	int e = errno;
	printf("makecontext: errno %d\n", e);
	for (int i = 1; i <= 3; i++) {
		errno = SENTINEL;
		int r = swapcontext(&worker_ctx, &co_ctx);
		e = errno;
		printf("switch %d: %d, errno %d\n", i, r, e);
	}
	return NULL;
}

int main(void)
{
	tp_touch_coroutine(); /* the main thread traced, and its memory mapped, before the limit */
	printf("start\n");
	fflush(stdout);
	pthread_t t;
	pthread_barrier_init(&limited, NULL, 2);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 2;
	long kb = tp_vm_size_kb();
	struct rlimit lim = {.rlim_cur = (rlim_t)kb * 1024 + 32 * 1024, .rlim_max = RLIM_INFINITY};
	if (kb <= 0 || setrlimit(RLIMIT_AS, &lim) != 0)
		return 3;
	pthread_barrier_wait(&limited);
	pthread_join(t, NULL);
	void *big = malloc(64 << 20);
	printf("64 MiB malloc: %s\n", big ? "ok" : "failed");
	return 0;
}

/* Threads that end while one of their coroutines runs: a coroutine calls pthread_exit, and two
 * are cancelled while they wait in hooked calls (read, poll), so that the cancellation unwinds
 * through the hooks' frames. Each runs a cleanup handler of its own on the way. Another thread
 * leaves a coroutine suspended and returns normally; main then resumes that coroutine, which
 * is alive, and lets it return. The pipes the cancelled coroutines waited on still work. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

enum { STACK = 64 * 1024 };
enum way { BY_EXIT, CANCELLED_IN_READ, CANCELLED_IN_POLL, RETURNS, WAYS };
static const char *const way_name[WAYS] = {"pthread_exit", "cancelled in read", "cancelled in poll",
					   "returns"};

static ucontext_t thread_ctx[WAYS], coro_ctx[WAYS], main_ctx;
static int pipes[WAYS][2];
static sem_t waiting;
static int cleanups[WAYS];

static void cleanup(void *arg)
{
	cleanups[(long)arg]++;
}

static void coroutine(int way)
{
	char c;
	pthread_cleanup_push(cleanup, (void *)(long)way);
	switch (way) {
	case BY_EXIT:
		pthread_exit((void *)42);
		break;
	case CANCELLED_IN_READ:
		sem_post(&waiting);
		if (read(pipes[way][0], &c, 1) >= 0)
			printf("read returned\n");
		break;
	case CANCELLED_IN_POLL: {
		struct pollfd p = {.fd = pipes[way][0], .events = POLLIN};
		sem_post(&waiting);
		poll(&p, 1, -1);
		printf("poll returned\n");
		break;
	}
	case RETURNS:
		swapcontext(&coro_ctx[way], &thread_ctx[way]);
		printf("%s: its coroutine resumed by main, on main's thread\n", way_name[way]);
		break;
	}
	pthread_cleanup_pop(0);
}

static void *thread_main(void *arg)
{
	long way = (long)arg;
	getcontext(&coro_ctx[way]);
	coro_ctx[way].uc_stack.ss_sp = malloc(STACK);
	coro_ctx[way].uc_stack.ss_size = STACK;
	coro_ctx[way].uc_link = &main_ctx;
	makecontext(&coro_ctx[way], (void (*)(void))coroutine, 1, (int)way);
	swapcontext(&thread_ctx[way], &coro_ctx[way]);
	return (void *)7;
}

int main(void)
{
	sem_init(&waiting, 0, 0);
	for (long way = 0; way < WAYS; way++) {
		if (pipe(pipes[way]) != 0) {
			perror("pipe");
			return 2;
		}
		pthread_t t;
		pthread_create(&t, NULL, thread_main, (void *)way);
		if (way == CANCELLED_IN_READ || way == CANCELLED_IN_POLL) {
			sem_wait(&waiting);
			pthread_cancel(t);
		}
		void *ret;
		pthread_join(t, &ret);
		char c = 0;
		errno = 0;
		ssize_t w = write(pipes[way][1], "x", 1), r = read(pipes[way][0], &c, 1);
		printf("%s: the thread ended with %s, cleanups %d; its pipe then wrote %zd, read "
		       "%zd "
		       "'%c', errno %d\n",
		       way_name[way],
		       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED"
		       : ret == (void *)42     ? "42"
					       : "7",
		       cleanups[way], w, r, c, errno);
	}
	swapcontext(&main_ctx, &coro_ctx[RETURNS]);
	printf("returns: its coroutine returned, cleanups %d\n", cleanups[RETURNS]);
	return 0;
}

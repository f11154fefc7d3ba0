/* Threads made with the least stack glibc allows (16 KiB, out of which glibc also carves the
 * static TLS of every loaded library) that use 7 KiB of it: untraced that leaves them room. Each
 * makes a coroutine (on a buffer of its own) that stays suspended, switches to it and back,
 * writes and reads a pipe, allocates and frees, and says it is done. */
#include <pthread.h>
#include <unistd.h>

#include "tp_coro.h"

enum { THREADS = 8, THREAD_STACK = 16384, USED = 7 * 1024, CORO_STACK = 64 * 1024 };

static ucontext_t thread_ctx[THREADS], coro_ctx[THREADS];
static char coro_stacks[THREADS][CORO_STACK];

static void thread_coro_body(int i)
{
	swapcontext(&coro_ctx[i], &thread_ctx[i]);
}

/* Its frame holds USED bytes, written: a thread with less room than untraced faults here. */
static __attribute__((noinline)) int deep_frame(int i)
{
	volatile char room[USED];
	for (int k = 0; k < USED; k += 64)
		room[k] = (char)(i + k);
	return room[USED - 64];
}

static void *thread_main(void *arg)
{
	int i = (int)(long)arg;
	int deep = deep_frame(i);
	getcontext(&coro_ctx[i]);
	coro_ctx[i].uc_stack.ss_sp = coro_stacks[i];
	coro_ctx[i].uc_stack.ss_size = CORO_STACK;
	makecontext(&coro_ctx[i], (void (*)(void))thread_coro_body, 1, i);
	swapcontext(&thread_ctx[i], &coro_ctx[i]);
	int p[2];
	char c = 0;
	if (pipe(p) != 0 || write(p[1], "x", 1) != 1 || read(p[0], &c, 1) != 1)
		return NULL;
	close(p[0]);
	close(p[1]);
	free(malloc(100));
	return c == 'x' && deep == (char)(i + USED - 64) ? arg : NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, THREAD_STACK) != 0) {
		fprintf(stderr, "small_thread_stacks: no stack of %d bytes\n", THREAD_STACK);
		return 2;
	}
	pthread_t threads[THREADS];
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], &attr, thread_main, (void *)i) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (long i = 0; i < THREADS; i++) {
		void *ret;
		pthread_join(threads[i], &ret);
		printf("thread %ld: %s\n", i, ret == (void *)i ? "done" : "failed");
	}
	return 0;
}

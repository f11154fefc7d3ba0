/* Threads and address space: 200 threads wait on a barrier; the program prints "ready" once
 * every thread is running and blocked, then waits for its stdin to close (the harness reads its
 * VmSize/VmRSS meanwhile), releases them, joins them and exits 0. */
#include <pthread.h>
#include <unistd.h>

#include "tp_coro.h"

enum { THREADS = 200 };

static pthread_barrier_t started, release;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&release);
	return NULL;
}

int main(void)
{
	static pthread_t threads[THREADS];
	tp_touch_coroutine();
	pthread_barrier_init(&started, NULL, THREADS + 1);
	pthread_barrier_init(&release, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], NULL, waiter, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
	pthread_barrier_wait(&started);
	tp_ready();
	char c;
	while (read(0, &c, 1) > 0)
		;
	pthread_barrier_wait(&release);
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

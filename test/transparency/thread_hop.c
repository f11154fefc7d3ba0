/* Coroutines that move between threads (an M:N scheduler): three ucontext coroutines are resumed
 * in turn by two worker threads, so that each is resumed by the other thread than the last
 * time. After each resume a coroutine reads which thread it runs on, and switches back to that
 * thread's scheduler, through the program's own thread-local state. The tracer looks its
 * thread up anew after every switch (preload/threads.h): a stale one would record the switch
 * on the wrong thread, or worse. Prints, per coroutine, its resumes on each worker and any
 * resume on a thread other than the one whose turn it was. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { COROS = 3, ROUNDS = 2000, WORKERS = 2 };

static ucontext_t co[COROS];
static char stacks[COROS][64 * 1024];
static int resumes[COROS][WORKERS], wrong_thread[COROS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static long turn; /* resume number k is coroutine k % COROS, by worker k % WORKERS */
enum { TURNS = COROS * (ROUNDS + 1) };

static __thread ucontext_t *sched_ctx;
static __thread int worker_id;

/* Out of line: after a switch the coroutine may be on another thread, and a compiler may keep
 * a thread-local address across the call that switched. */
__attribute__((noinline)) static int my_worker(void)
{
	return worker_id;
}

__attribute__((noinline)) static ucontext_t *my_sched(void)
{
	return sched_ctx;
}

static long expected_worker;

static void body(int i)
{
	for (;;) {
		int w = my_worker();
		resumes[i][w]++;
		if (w != expected_worker)
			wrong_thread[i]++;
		swapcontext(&co[i], my_sched());
	}
}

static void *worker(void *arg)
{
	ucontext_t here;
	sched_ctx = &here;
	worker_id = (int)(long)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (turn < TURNS && turn % WORKERS != worker_id)
			pthread_cond_wait(&turn_changed, &lock);
		if (turn >= TURNS)
			break;
		int i = (int)(turn % COROS);
		expected_worker = worker_id;
		swapcontext(&here, &co[i]);
		turn++;
		pthread_cond_broadcast(&turn_changed);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Apart from main: getcontext returns twice in principle, and main's loop variables would be
 * the compiler's to worry about (-Wclobbered). */
static void make_coroutine(int i)
{
	getcontext(&co[i]);
	co[i].uc_stack.ss_sp = stacks[i];
	co[i].uc_stack.ss_size = sizeof(stacks[i]);
	co[i].uc_link = NULL; /* never returns */
	makecontext(&co[i], (void (*)(void))body, 1, i);
}

int main(void)
{
	for (int i = 0; i < COROS; i++)
		make_coroutine(i);
	pthread_t t[WORKERS];
	for (long w = 0; w < WORKERS; w++)
		if (pthread_create(&t[w], NULL, worker, (void *)w) != 0)
			return 2;
	for (int w = 0; w < WORKERS; w++)
		pthread_join(t[w], NULL);
	for (int i = 0; i < COROS; i++)
		printf("coroutine %d: resumed %d times on worker 0, %d on worker 1, %d on the "
		       "wrong "
		       "thread\n",
		       i, resumes[i][0], resumes[i][1], wrong_thread[i]);
	return 0;
}

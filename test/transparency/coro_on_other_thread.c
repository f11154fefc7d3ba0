/* A coroutine one thread makes on a buffer inside another thread's stack: main makes it, with
 * makecontext, on a local array of a pthread that lends it, runs it until it suspends, and
 * lets the lender exit. The coroutine is left suspended on memory that is no longer anybody's
 * stack: glibc keeps the joined thread's stack for the next thread it starts. A late pthread
 * then runs there, its frames where the array was, and switches LATE_ROUNDS times between its
 * own context and a coroutine on a heap stack (it checks that its context's stack pointer lies
 * inside the old array, and prints it): those switches back are its own, not the coroutine's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

enum {
	LENT = 32 * 1024,
	HEAP_STACK = 64 * 1024,
	LATE_ROUNDS = 200,
};

static sem_t lent_ready, may_exit;
static unsigned char *lent; /* the lender's array, while it lives */
static uintptr_t lent_lo, lent_hi;

static ucontext_t main_ctx, guest_ctx;
static long guest_runs;

static ucontext_t late_ctx, heap_ctx;
static long heap_runs;
static int late_inside;

static void guest(void)
{
	for (;;) {
		guest_runs++;
		swapcontext(&guest_ctx, &main_ctx);
	}
}

static void on_heap(void)
{
	for (;;) {
		heap_runs++;
		swapcontext(&heap_ctx, &late_ctx);
	}
}

static void *lender(void *arg)
{
	(void)arg;
	unsigned char array[LENT] __attribute__((aligned(16)));
	lent = array;
	lent_lo = (uintptr_t)array;
	lent_hi = lent_lo + LENT;
	sem_post(&lent_ready);
	sem_wait(&may_exit);
	__asm__ volatile("" : : "r"(array) : "memory"); /* kept in the frame until now */
	return NULL;
}

static __attribute__((noinline)) void late_switches(void)
{
	unsigned char here;
	__asm__ volatile("" : : "r"(&here) : "memory");
	late_inside = (uintptr_t)&here >= lent_lo && (uintptr_t)&here < lent_hi;
	for (int i = 0; i < LATE_ROUNDS; i++)
		swapcontext(&late_ctx, &heap_ctx);
}

static void *late(void *arg)
{
	(void)arg;
	unsigned char pad[LENT / 2];
	__asm__ volatile(""
			 :
			 : "r"(pad)
			 : "memory"); /* its callee's frames lie below, in the array */
	void *stack = malloc(HEAP_STACK);
	if (!stack)
		return NULL;
	getcontext(&heap_ctx);
	heap_ctx.uc_stack.ss_sp = stack;
	heap_ctx.uc_stack.ss_size = HEAP_STACK;
	heap_ctx.uc_link = NULL;
	makecontext(&heap_ctx, on_heap, 0);
	late_switches();
	return NULL; /* the heap coroutine stays suspended, as the guest does */
}

static void run_thread(void *(*fn)(void *))
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, NULL);
	if (!err)
		err = pthread_join(t, NULL);
	if (err) {
		fprintf(stderr, "pthread: %s\n", strerror(err));
		exit(1);
	}
}

int main(void)
{
	sem_init(&lent_ready, 0, 0);
	sem_init(&may_exit, 0, 0);
	pthread_t t;
	int err = pthread_create(&t, NULL, lender, NULL);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return 1;
	}
	sem_wait(&lent_ready);
	getcontext(&guest_ctx);
	guest_ctx.uc_stack.ss_sp = lent;
	guest_ctx.uc_stack.ss_size = LENT;
	guest_ctx.uc_link = NULL;
	makecontext(&guest_ctx, guest, 0);
	swapcontext(&main_ctx, &guest_ctx); /* it runs once and suspends */
	sem_post(&may_exit);
	pthread_join(t, NULL);
	run_thread(late);
	printf("guest ran %ld time(s); the late thread switched %ld times, from inside the lent "
	       "array: %s\n",
	       guest_runs, heap_runs, late_inside ? "yes" : "no");
	return 0;
}

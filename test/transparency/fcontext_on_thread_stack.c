/* Boost.Context coroutines whose stacks are buffers inside a thread's own stack: local arrays in
 * the frame of main and of a pthread's start routine, as programs do that give fixed-size
 * coroutines a buffer on the caller's stack instead of a heap stack (make_fcontext on a local
 * array). A tracer that knows a switch's target by the stack its stack pointer lies in must not
 * take such a coroutine for the thread itself, although its stack lies in the thread's.
 *
 * Each of the two threads (main, and a pthread running at the same time):
 *   1. switches a few times between two coroutines on heap stacks (warm-up: a tracer's answers
 *      for the thread's own stack pointer and for the heap stacks are known then);
 *   2. makes coroutines on its local arrays: one 8 KiB array, one array placed so that the
 *      coroutine's stack pointer lies on the same 4 KiB page as the thread's own when it
 *      switches (checked on every resume, printed), and one 8 KiB array used twice: its first
 *      coroutine finishes after FIRST_RESUMES resumes (its last switch away; it is never
 *      resumed again) and a second make_fcontext on the same array starts another;
 *   3. resumes them ROUNDS times, interleaved with the heap ones.
 * Then, once the pthread has exited leaving two of its coroutines suspended on its arrays, a
 * late pthread (on the same stack: glibc keeps a joined thread's stack for the next one)
 * switches LATE_ROUNDS times between two heap coroutines from frames inside those arrays
 * (checked on every resume, printed): its switches back to its own stack are its own.
 * Every coroutine adds to a sum of its own and to its thread's hash of the order of visits; the
 * resumer counts resumes. The program prints them all, so its output is the same on every run.
 *
 * Every resume is a jump_fcontext into the coroutine, and every suspend one out of it (its last
 * included): the case compares those counts with the trace's switches. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcontext_abi.h"

enum {
	PAGE = 4096,
	HEAP_STACK = 64 * 1024,
	LOCAL_STACK = 8 * 1024,
	/* The same-page coroutine's stack: small enough that all of it lies on the page where it
	 * starts (SHARED_OFFSET bytes into it), with room below on that page for the thread's
	 * frames between the array and its switch. */
	SHARED_STACK = 2560,
	SHARED_OFFSET = 1024,
	WARM_ROUNDS = 5,
	ROUNDS = 3000,
	FIRST_RESUMES = 1000,
	LATE_ROUNDS = 1000,
};

struct run;

struct coro {
	const char *name;
	int id;
	struct run *run;
	fcontext_t ctx;	 /* where it resumes (its stack pointer) */
	fcontext_t back; /* its resumer, while it runs */
	long resumes;	 /* counted by the resumer */
	long suspends;	 /* counted by the coroutine */
	long limit;	 /* it finishes on its limit-th resume; 0: never */
	int finished;
	uint64_t sum;
	long same_page; /* resumes from a stack pointer on the coroutine's own page */
};

/* One thread's run: its coroutines, and the hash of the order in which they ran. Printed once
 * both threads are done, so that the output does not depend on how they interleaved. */
struct run {
	const char *who;
	uint64_t order;
	struct coro heap[2], local, page, first, again;
	long from_left_behind; /* resumes of heap coroutines from inside left_behind */
};

/* The pthread's arrays that hold coroutines still suspended when it exits. */
static struct {
	uintptr_t lo, hi;
} left_behind[2];

/* Every resume: the coroutine's work, then back to its resumer. */
static void coro_body(transfer_t t, int id)
{
	struct coro *c = t.data;
	if (c->id != id)
		abort();
	for (;;) {
		c->back = t.fctx;
		if ((uintptr_t)t.fctx / PAGE == (uintptr_t)c->ctx / PAGE)
			c->same_page++;
		uint64_t n = (uint64_t)c->resumes;
		c->sum += n * n % 9973 + (uint64_t)id * 7;
		c->run->order = c->run->order * 1000003 + (uint64_t)id;
		c->suspends++;
		if (c->limit && c->resumes == c->limit) {
			c->finished = 1;
			jump_fcontext(c->back, c); /* its last switch: never resumed again */
			abort();
		}
		t = jump_fcontext(c->back, c);
	}
}

/* One entry function per coroutine (made so in the trace's "entry"). */
static void on_heap(transfer_t t)
{
	coro_body(t, 1);
}
static void main_local(transfer_t t)
{
	coro_body(t, 2);
}
static void main_shared_page(transfer_t t)
{
	coro_body(t, 3);
}
static void main_reused_first(transfer_t t)
{
	coro_body(t, 4);
}
static void main_reused_again(transfer_t t)
{
	coro_body(t, 5);
}
static void thread_local_stack(transfer_t t)
{
	coro_body(t, 6);
}
static void thread_shared_page(transfer_t t)
{
	coro_body(t, 7);
}
static void thread_reused_first(transfer_t t)
{
	coro_body(t, 8);
}
static void thread_reused_again(transfer_t t)
{
	coro_body(t, 9);
}
static void late_on_heap(transfer_t t)
{
	coro_body(t, 10);
}

/* The entry functions of one thread's coroutines on its own stack, and the first one's id. */
struct entries {
	void (*local)(transfer_t);
	void (*shared_page)(transfer_t);
	void (*reused_first)(transfer_t);
	void (*reused_again)(transfer_t);
	int first_id;
};

static void make(struct coro *c, const char *name, int id, struct run *run, void *lo, size_t size,
		 void (*fn)(transfer_t), long limit)
{
	*c = (struct coro){.name = name, .id = id, .run = run, .limit = limit};
	c->ctx = make_fcontext((char *)lo + size, size, fn);
}

static void resume(struct coro *c)
{
	if (c->finished)
		abort();
	c->resumes++;
	c->ctx = jump_fcontext(c->ctx, c).fctx;
}

/* The length of a local array declared right now whose start lies SHARED_OFFSET bytes into a
 * page: the thread's stack pointer when it switches is a little below it, on that page. */
static size_t shared_page_array_len(void)
{
	uintptr_t sp;
	__asm__ volatile("movq %%rsp, %0" : "=r"(sp));
	return SHARED_STACK + ((sp - SHARED_STACK - SHARED_OFFSET) & (PAGE - 1));
}

static bool in_left_behind(fcontext_t sp)
{
	for (int i = 0; i < 2; i++)
		if (left_behind[i].lo <= (uintptr_t)sp && (uintptr_t)sp < left_behind[i].hi)
			return true;
	return false;
}

/* Two coroutines on heap stacks (entry fn, id), resumed in turn `rounds` times. */
static void make_heap_pair(struct run *r, void *stacks[2], void (*fn)(transfer_t), int id,
			   int rounds)
{
	for (int i = 0; i < 2; i++) {
		stacks[i] = malloc(HEAP_STACK);
		if (!stacks[i])
			abort();
		make(&r->heap[i], i ? "heap two" : "heap one", id, r, stacks[i], HEAP_STACK, fn, 0);
	}
	for (int round = 0; round < rounds; round++)
		for (int i = 0; i < 2; i++) {
			resume(&r->heap[i]);
			r->from_left_behind += in_left_behind(r->heap[i].back);
		}
}

/* Parts 1 to 3 for one thread, on the arrays of its caller's frame. */
static void run_thread(struct run *r, const struct entries *e, void *local, void *shared,
		       void *reused)
{
	void *heap_stacks[2];
	make_heap_pair(r, heap_stacks, on_heap, 1, WARM_ROUNDS);

	int id = e->first_id;
	make(&r->local, "local array", id, r, local, LOCAL_STACK, e->local, 0);
	make(&r->page, "array on its switch page", id + 1, r, shared, SHARED_STACK, e->shared_page,
	     0);
	make(&r->first, "reused array, first", id + 2, r, reused, LOCAL_STACK, e->reused_first,
	     FIRST_RESUMES);
	for (int round = 0; round < ROUNDS; round++) {
		resume(&r->heap[0]);
		resume(&r->local);
		resume(&r->heap[1]);
		resume(&r->page);
		if (round < FIRST_RESUMES) {
			resume(&r->first);
		} else {
			if (round == FIRST_RESUMES)
				make(&r->again, "reused array, again", id + 3, r, reused,
				     LOCAL_STACK, e->reused_again, 0);
			resume(&r->again);
		}
	}
	for (int i = 0; i < 2; i++)
		free(heap_stacks[i]);
}

static void print_coro(const struct run *r, const struct coro *c)
{
	printf("%s %s: resumed %ld, suspended %ld, sum %llu%s\n", r->who, c->name, c->resumes,
	       c->suspends, (unsigned long long)c->sum, c->finished ? ", finished" : "");
}

static void print_run(const struct run *r)
{
	for (int i = 0; i < 2; i++)
		print_coro(r, &r->heap[i]);
	if (r->local.name == NULL) { /* the late thread's */
		printf("%s: switched from inside its predecessor's arrays every time: %s\n", r->who,
		       r->from_left_behind == 2 * LATE_ROUNDS ? "yes" : "no");
		return;
	}
	print_coro(r, &r->local);
	print_coro(r, &r->page);
	printf("%s %s: resumed from its own page every time: %s\n", r->who, r->page.name,
	       r->page.same_page == r->page.resumes ? "yes" : "no");
	print_coro(r, &r->first);
	print_coro(r, &r->again);
	printf("%s order of visits: %016llx\n", r->who, (unsigned long long)r->order);
}

static struct run main_run = {.who = "main"}, thread_run = {.who = "thread"},
		  late_run = {.who = "late"};

static void *thread_main(void *arg)
{
	(void)arg;
	static const struct entries e = {thread_local_stack, thread_shared_page,
					 thread_reused_first, thread_reused_again, 6};
	unsigned char local[LOCAL_STACK] __attribute__((aligned(16)));
	unsigned char reused[LOCAL_STACK] __attribute__((aligned(16)));
	unsigned char shared[shared_page_array_len()] __attribute__((aligned(16)));
	run_thread(&thread_run, &e, local, shared, reused);
	/* Its "local array" and "reused array, again" coroutines stay suspended. */
	left_behind[0].lo = (uintptr_t)local;
	left_behind[0].hi = (uintptr_t)local + LOCAL_STACK;
	left_behind[1].lo = (uintptr_t)reused;
	left_behind[1].hi = (uintptr_t)reused + LOCAL_STACK;
	return NULL;
}

/* The late thread: its frames below the padding lie where thread_main's arrays were. */
static void *late_main(void *arg)
{
	(void)arg;
	unsigned char pad[LOCAL_STACK / 2];
	__asm__ volatile("" : : "r"(pad) : "memory"); /* kept in the frame */
	void *heap_stacks[2];
	make_heap_pair(&late_run, heap_stacks, late_on_heap, 10, LATE_ROUNDS);
	for (int i = 0; i < 2; i++)
		free(heap_stacks[i]);
	return NULL;
}

static pthread_t start(void *(*fn)(void *))
{
	pthread_t thread;
	int err = pthread_create(&thread, NULL, fn, NULL);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	return thread;
}

static void join(pthread_t thread)
{
	int err = pthread_join(thread, NULL);
	if (err) {
		fprintf(stderr, "pthread_join: %s\n", strerror(err));
		exit(1);
	}
}

int main(void)
{
	static const struct entries e = {main_local, main_shared_page, main_reused_first,
					 main_reused_again, 2};
	unsigned char local[LOCAL_STACK] __attribute__((aligned(16)));
	unsigned char reused[LOCAL_STACK] __attribute__((aligned(16)));
	unsigned char shared[shared_page_array_len()] __attribute__((aligned(16)));
	pthread_t thread = start(thread_main);
	run_thread(&main_run, &e, local, shared, reused);
	join(thread);
	join(start(late_main)); /* on the stack thread_main ran on */
	print_run(&main_run);
	print_run(&thread_run);
	print_run(&late_run);
	return 0;
}

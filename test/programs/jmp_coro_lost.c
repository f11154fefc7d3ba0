/* A QEMU-style coroutine runtime with a planted lost wakeup. Coroutines are made with makecontext
 * and started with one swapcontext; the entry trampoline hands control straight back with
 * sigsetjmp/siglongjmp (the start handshake), and from then on every switch is sigsetjmp(from) +
 * siglongjmp(to) (glibc mangles the saved stack pointer; preload/longjmp_hooks.c undoes it).
 * Finished coroutines go back to a pool and are reused, as QEMU's are.
 *
 * WORKERS workers each read ROUNDS bytes from a pipe of their own, waiting for it through a small
 * poll() scheduler; each byte read is one job, run by a pooled coroutine the worker enters.
 *
 *   jmp_coro_lost [--lose-one] [WORKERS [ROUNDS]]   (defaults 4 and 50)
 *
 * With --lose-one the scheduler closes the read end of worker 0's pipe while worker 0 waits on
 * it, and forgets it: nothing will ever wake worker 0 (a lost wakeup), and the program ends with
 * it still waiting. It prints the stranded fd ("lost fd N") and, in every mode, the switches it
 * made ("switches N": every siglongjmp between coroutines, and the one swapcontext of each
 * coroutine's start). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

enum action { CO_YIELD = 1, CO_TERMINATE = 2, CO_ENTER = 3 };
enum { STACK = 64 * 1024, MAX_WORKERS = 64, POOL = 16 };

struct coro {
	sigjmp_buf env;
	struct coro *caller;
	void (*fn)(void *);
	void *arg;
	char *stack;
};

static struct coro leader; /* the thread's own stack */
static struct coro *current = &leader;
static sigjmp_buf *handshake;
static unsigned long switches;
static struct coro *pool[POOL];
static int pooled;

static enum action co_switch(struct coro *from, struct coro *to, enum action action)
{
	int ret = sigsetjmp(from->env, 0);
	if (ret == 0) {
		current = to;
		switches++;
		siglongjmp(to->env, action);
	}
	current = from;
	return (enum action)ret;
}

static void trampoline(void)
{
	struct coro *self = current;
	if (!sigsetjmp(self->env, 0)) {
		current = self->caller;
		switches++;
		siglongjmp(*handshake, 1);
	}
	for (;;) {
		self->fn(self->arg);
		co_switch(self, self->caller, CO_TERMINATE);
	}
}

static struct coro *co_new(void)
{
	if (pooled)
		return pool[--pooled];
	struct coro *volatile co = calloc(1, sizeof(*co));
	ucontext_t uc, old;
	if (!co || !(co->stack = malloc(STACK)) || getcontext(&uc) < 0)
		exit(1);
	uc.uc_stack.ss_sp = co->stack;
	uc.uc_stack.ss_size = STACK;
	uc.uc_link = NULL;
	makecontext(&uc, trampoline, 0);
	sigjmp_buf back;
	handshake = &back;
	co->caller = current;
	struct coro *volatile self = current;
	if (!sigsetjmp(back, 0)) {
		current = co;
		switches++;
		swapcontext(&old, &uc);
	}
	current = self;
	return co;
}

/* Runs co until it yields or finishes; a finished one goes back to the pool. */
static void co_enter(struct coro *co, void (*fn)(void *), void *arg)
{
	if (fn) {
		co->fn = fn;
		co->arg = arg;
	}
	co->caller = current;
	if (co_switch(current, co, CO_ENTER) == CO_TERMINATE && pooled < POOL)
		pool[pooled++] = co;
}

/* ---- the scheduler: coroutines wait for a readable fd ---- */

struct worker {
	struct coro *co;
	int fd, wfd;
	int waiting; /* waits for fd to be readable */
	int got, done;
	long sum;
};
static struct worker workers[MAX_WORKERS];
static int nworkers, rounds;

static void wait_readable(struct worker *w)
{
	w->waiting = 1;
	co_switch(current, current->caller, CO_YIELD);
}

static void job(void *arg)
{
	long *sum = arg;
	*sum += 1;
}

static void worker_main(void *arg)
{
	struct worker *w = arg;
	while (w->got < rounds) {
		char b;
		ssize_t n = read(w->fd, &b, 1);
		if (n < 0 && errno == EAGAIN) {
			wait_readable(w);
			continue;
		}
		if (n != 1)
			break;
		w->got++;
		co_enter(co_new(), job, &w->sum); /* each byte is one job, on a pooled coroutine */
	}
	w->done = 1;
}

int main(int argc, char **argv)
{
	int lose = argc > 1 && strcmp(argv[1], "--lose-one") == 0;
	nworkers = argc > 1 + lose ? atoi(argv[1 + lose]) : 4;
	rounds = argc > 2 + lose ? atoi(argv[2 + lose]) : 50;
	if (nworkers < 1 || nworkers > MAX_WORKERS || rounds < 1) {
		fprintf(stderr, "usage: jmp_coro_lost [--lose-one] [WORKERS [ROUNDS]]\n");
		return 2;
	}
	for (int i = 0; i < nworkers; i++) {
		int p[2];
		if (pipe2(p, O_NONBLOCK) < 0)
			return 1;
		workers[i] = (struct worker){.fd = p[0], .wfd = p[1]};
		workers[i].co = co_new();
		co_enter(workers[i].co, worker_main, &workers[i]);
	}
	int lost_fd = -1;
	for (int sent = 0; sent < rounds; sent++) {
		for (int i = 0; i < nworkers; i++)
			if (workers[i].fd >= 0 && write(workers[i].wfd, "x", 1) != 1)
				return 1;
		if (lose && sent == rounds / 2 && workers[0].waiting) {
			/* The bug: the scheduler drops worker 0's fd without waking it. */
			lost_fd = workers[0].fd;
			close(workers[0].fd);
			workers[0].fd = -1;
		}
		for (int again = 1; again;) {
			struct pollfd pfd[MAX_WORKERS];
			int idx[MAX_WORKERS], n = 0;
			for (int i = 0; i < nworkers; i++)
				if (workers[i].waiting && workers[i].fd >= 0) {
					pfd[n] = (struct pollfd){.fd = workers[i].fd,
								 .events = POLLIN};
					idx[n++] = i;
				}
			again = n > 0 && poll(pfd, n, 0) > 0;
			for (int k = 0; again && k < n; k++)
				if (pfd[k].revents & POLLIN) {
					workers[idx[k]].waiting = 0;
					co_enter(workers[idx[k]].co, NULL, NULL);
				}
		}
	}
	long total = 0;
	int done = 0;
	for (int i = 0; i < nworkers; i++) {
		total += workers[i].sum;
		done += workers[i].done;
	}
	if (lost_fd >= 0)
		printf("lost fd %d\n", lost_fd);
	printf("jobs %ld done %d switches %lu\n", total, done, switches);
	return 0;
}

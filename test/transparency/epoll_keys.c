/* Readiness that epoll reports by keys of the program's own (Asio's pointers), more keys than the
 * tracer's small table of keys holds: PIPES coroutines each wait on a pipe of their own, and
 * every pipe is registered in each of SETS epoll sets with a pointer of its own as the data, so
 * that 2,400 keys name 60 fds. In each round every pipe gets a byte, one set is asked what is
 * ready, and the coroutine each reported key points to is resumed, reads its byte and waits
 * again. The first sets' keys land in the tracer's small table and the last ones' in its large
 * one; the trace must name the waiter of every readiness reported, in every round. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <ucontext.h>
#include <unistd.h>

enum { PIPES = 60, SETS = 40, STACK = 64 * 1024 };

struct waiter {
	int read_fd, write_fd;
	ucontext_t ctx;
	long reads;
	char stack[STACK];
};

/* What a registration's data points to: the pipe's waiter. */
struct key {
	struct waiter *w;
};

static struct waiter waiters[PIPES];
static struct key keys[SETS][PIPES];
static ucontext_t main_ctx;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* Reads what there is, then waits (EAGAIN) until resumed. */
static void waiter_body(int i)
{
	struct waiter *w = &waiters[i];
	for (;;) {
		char c;
		ssize_t n = read(w->read_fd, &c, 1);
		if (n == 1)
			w->reads++;
		else if (n < 0 && errno == EAGAIN)
			swapcontext(&w->ctx, &main_ctx);
		else
			die("read");
	}
}

int main(void)
{
	int sets[SETS];
	for (int s = 0; s < SETS; s++)
		if ((sets[s] = epoll_create1(EPOLL_CLOEXEC)) < 0)
			die("epoll_create1");
	for (int i = 0; i < PIPES; i++) {
		int p[2];
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0)
			die("pipe2");
		struct waiter *w = &waiters[i];
		w->read_fd = p[0];
		w->write_fd = p[1];
		for (int s = 0; s < SETS; s++) {
			keys[s][i].w = w;
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &keys[s][i]};
			if (epoll_ctl(sets[s], EPOLL_CTL_ADD, w->read_fd, &ev) != 0)
				die("epoll_ctl");
		}
		if (getcontext(&w->ctx) != 0)
			die("getcontext");
		w->ctx.uc_stack.ss_sp = w->stack;
		w->ctx.uc_stack.ss_size = sizeof(w->stack);
		w->ctx.uc_link = NULL;
		makecontext(&w->ctx, (void (*)(void))waiter_body, 1, i);
		/* Its first read finds nothing: it waits. */
		if (swapcontext(&main_ctx, &w->ctx) != 0)
			die("swapcontext");
	}
	long ready = 0;
	for (int s = 0; s < SETS; s++) {
		for (int i = 0; i < PIPES; i++)
			if (write(waiters[i].write_fd, "x", 1) != 1)
				die("write");
		struct epoll_event events[PIPES];
		int n = epoll_wait(sets[s], events, PIPES, 1000);
		if (n != PIPES) {
			fprintf(stderr, "round %d: %d of %d pipes ready\n", s, n, PIPES);
			return 1;
		}
		ready += n;
		for (int k = 0; k < n; k++) {
			struct key *key = events[k].data.ptr;
			if (swapcontext(&main_ctx, &key->w->ctx) != 0)
				die("swapcontext");
		}
	}
	long reads = 0;
	for (int i = 0; i < PIPES; i++)
		reads += waiters[i].reads;
	printf("%d rounds, %d keys, %ld ready, %ld reads\n", SETS, SETS * PIPES, ready, reads);
	return 0;
}

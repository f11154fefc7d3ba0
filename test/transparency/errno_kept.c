/* errno: at main, as the loader and the constructors left it (the tracer's start, tracing or
 * not, changes nothing of it); with errno set to a sentinel, makecontext, switches there and
 * back, and hooked I/O calls that succeed leave it alone; a failing read on a bad fd leaves exactly
 * EBADF; calls that would block, in a coroutine (where the tracer records a wait, and unwinds the
 * stack the first time at a place only), leave exactly EAGAIN, the first time and the next ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tp_coro.h"

enum { SENTINEL = 4242 };

static ucontext_t main_ctx, co_ctx;
static char co_stack[64 * 1024];
static int empty_pipe[2], quiet_pair[2]; /* non-blocking, nothing ever written */

#define SHOW(what, call)                                                                           \
	do {                                                                                       \
		errno = SENTINEL;                                                                  \
		long r_ = (long)(call);                                                            \
		int e_ = errno;                                                                    \
		printf("%-28s -> %s, errno %d\n", what, r_ < 0 ? "-1" : "ok", e_);                 \
	} while (0)

static void co_body(void)
{
	int e = errno;
	printf("%-28s errno %d\n", "in coroutine, first entry", e);
	errno = SENTINEL;
	swapcontext(&co_ctx, &main_ctx);
	e = errno;
	printf("%-28s errno %d\n", "in coroutine, resumed", e);
	char c;
	for (int i = 0; i < 3; i++) {
		SHOW("read would block", read(empty_pipe[0], &c, 1));
		SHOW("recv would block", recv(quiet_pair[0], &c, 1, 0));
		struct pollfd pfd = {.fd = quiet_pair[0], .events = POLLIN};
		SHOW("poll, zero timeout", poll(&pfd, 1, 0));
	}
	errno = SENTINEL;
}

int main(void)
{
	printf("%-28s errno %d\n", "at main", errno);
	int p[2];
	if (pipe(p) != 0 || pipe2(empty_pipe, O_NONBLOCK) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, quiet_pair) != 0)
		return 2;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	errno = SENTINEL;
	makecontext(&co_ctx, co_body, 0);
	int e = errno;
	printf("%-28s errno %d\n", "makecontext", e);
	SHOW("swapcontext there and back", swapcontext(&main_ctx, &co_ctx));
	SHOW("swapcontext to the end", swapcontext(&main_ctx, &co_ctx));
	SHOW("write", write(p[1], "x", 1));
	char c;
	SHOW("read", read(p[0], &c, 1));
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]};
	SHOW("epoll_ctl ADD", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	SHOW("write", write(p[1], "y", 1));
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	SHOW("poll", poll(&pfd, 1, 1000));
	SHOW("epoll_wait", epoll_wait(ep, &ev, 1, 1000));
	SHOW("read", read(p[0], &c, 1));
	SHOW("epoll_ctl DEL", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
	int d = dup(p[0]);
	SHOW("dup2 over an open fd", dup2(p[1], d));
	SHOW("close", close(d));
	SHOW("close", close(ep));
	errno = SENTINEL;
	long r = read(-1, &c, 1);
	e = errno;
	printf("%-28s -> %ld, errno %d (%s)\n", "read on fd -1", r, e, strerror(e));
	errno = SENTINEL;
	r = close(p[0]);
	e = errno;
	printf("%-28s -> %ld, errno %d\n", "close", r, e);
	return 0;
}

/* Children that run in the program's memory close an fd a coroutine waits on: a vfork child,
 * and a clone(CLONE_VM | CLONE_VFORK) child on a stack of its own. Their closes are theirs, not
 * the program's: the fd stays open here, the coroutine reads from it after all, and only the
 * program's own close at the end is one of its fd. A fork child's close is its own too. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

enum { STACK = 64 * 1024 };

static ucontext_t main_ctx, co_ctx;
static int pipe_fds[2];
static char co_stack[STACK], clone_stack[STACK];
static long got;

/* Reads one byte, suspending while there is none. */
static void reader(void)
{
	char byte;
	for (;;) {
		ssize_t n = read(pipe_fds[0], &byte, 1);
		if (n == 1) {
			got = byte;
			return;
		}
		swapcontext(&co_ctx, &main_ctx); /* EAGAIN: wait to be resumed */
	}
}

static int clone_child(void *arg)
{
	(void)arg;
	close(pipe_fds[0]);
	return 0;
}

static void reap(pid_t pid, const char *what)
{
	int status;
	if (pid < 0 || waitpid(pid, &status, __WALL) != pid || !WIFEXITED(status)) {
		perror(what);
		exit(2);
	}
}

int main(void)
{
	if (pipe2(pipe_fds, O_NONBLOCK) != 0) {
		perror("pipe2");
		return 2;
	}
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, reader, 0);
	swapcontext(&main_ctx, &co_ctx); /* the reader now waits on the pipe */

	pid_t pid = vfork();
	if (pid == 0) {
		close(pipe_fds[0]);
		_exit(0);
	}
	reap(pid, "vfork");
	reap(clone(clone_child, clone_stack + sizeof(clone_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
		   NULL),
	     "clone");
	pid = fork();
	if (pid == 0) {
		close(pipe_fds[0]);
		_exit(0);
	}
	reap(pid, "fork");

	if (write(pipe_fds[1], "x", 1) != 1) {
		perror("write");
		return 2;
	}
	swapcontext(&main_ctx, &co_ctx);
	printf("the reader got '%c'\n", (char)got);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	return 0;
}

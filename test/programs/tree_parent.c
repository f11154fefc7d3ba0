/* A process tree for the tracer: switches coroutines itself, then makes children every way a
 * server does, each of which switches coroutines too (tree_child):
 *   fork (the child switches, then exits 4), posix_spawn, vfork + exec with an environment of
 *   its own (no LD_PRELOAD, no CTP_*), and finally an exec of its own image into tree_child.
 * Before all that it behaves like a daemon that closes every fd it did not open (a loop of
 * close, then close_range) and dup2s over the high fds: the tracer must survive it.
 * Prints `pid NAME PID` for each process it makes, so the test can match the trace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

extern char **environ;

static ucontext_t main_ctx, co_ctx;
static char stack[64 * 1024];

static void bounce(void)
{
	for (;;)
		swapcontext(&co_ctx, &main_ctx);
}

static void switch_times(int n)
{
	for (int i = 0; i < n; i++)
		swapcontext(&main_ctx, &co_ctx);
}

static void close_everything_like_a_daemon(void)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	close_range(3, ~0u, 0);
	int null = open("/dev/null", O_RDWR);
	for (int fd = 900; fd < 1024; fd++)
		dup2(null, fd);
	for (int fd = 900; fd < 1024; fd++)
		close(fd);
	close(null);
}

static void wait_for(pid_t pid, const char *what)
{
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror(what);
		exit(1);
	}
	printf("status %s %d\n", what, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

int main(int argc, char **argv)
{
	const char *child = argc > 1 ? argv[1] : "./tree_child";
	setvbuf(stdout, NULL, _IONBF, 0);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	makecontext(&co_ctx, bounce, 0);

	close_everything_like_a_daemon();
	switch_times(5); /* 10 switches, after the fds are gone */

	pid_t pid = fork();
	if (pid == 0) {
		switch_times(3); /* 6 switches of the fork child's own */
		_exit(4);
	}
	printf("pid fork %d\n", pid);
	wait_for(pid, "fork");

	char *spawn_argv[] = {(char *)child, "spawn", "7", NULL};
	if (posix_spawn(&pid, child, NULL, NULL, spawn_argv, environ) != 0)
		return 1;
	printf("pid spawn %d\n", pid);
	wait_for(pid, "spawn");

	pid = vfork();
	if (pid == 0) {
		char *env[] = {"PATH=/usr/bin:/bin", NULL};
		char *vargv[] = {(char *)child, "vfork", "9", NULL};
		execve(child, vargv, env);
		_exit(127);
	}
	printf("pid vfork %d\n", pid);
	wait_for(pid, "vfork");

	printf("pid exec %d\n", getpid());
	char *xargv[] = {(char *)child, "exec", "2", NULL};
	execv(child, xargv);
	return 127;
}

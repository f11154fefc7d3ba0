/* A process that starts another and is gone before that one has said hello to the collector,
 * as a daemon's first process or a launcher is: by fork, by posix_spawn, by vfork + exec, or by
 * exec itself.
 *
 *   leave_children HOW [STEP ARGS...]
 *
 * HOW = fork, spawn, vfork or exec. The child (the fork child, or this program run as
 * `leave_children child`) makes a coroutine, prints "child done" and exits. The parent prints
 * "parent leaves" first and exits 0 without waiting. With STEP, what is spawned or exec'd is
 * `STEP ARGS... THIS-PROGRAM child`: an untraced program in between (a static one that waits a
 * while, then execs the child) makes sure that the child says hello only after its parent has
 * gone. */
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp_coro.h"

extern char **environ;

static int child(void)
{
	tp_touch_coroutine();
	puts("child done");
	return 0;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	if (strcmp(how, "child") == 0)
		return child();
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = '\0';
	/* The child's command: [STEP ARGS...] SELF child. */
	char *cmd[64];
	int c = 0;
	for (int i = 2; i < argc && c < 60; i++)
		cmd[c++] = argv[i];
	cmd[c++] = self;
	cmd[c++] = "child";
	cmd[c] = NULL;

	tp_touch_coroutine();
	printf("parent leaves (%s)\n", how);
	fflush(stdout);
	if (strcmp(how, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0)
			return child();
		return pid > 0 ? 0 : 2;
	}
	if (strcmp(how, "spawn") == 0) {
		pid_t pid;
		return posix_spawn(&pid, cmd[0], NULL, NULL, cmd, environ) == 0 ? 0 : 2;
	}
	if (strcmp(how, "vfork") == 0) {
		pid_t pid = vfork();
		if (pid == 0) {
			execve(cmd[0], cmd, environ);
			_exit(127);
		}
		return pid > 0 ? 0 : 2;
	}
	if (strcmp(how, "exec") == 0) {
		execve(cmd[0], cmd, environ);
		return 2;
	}
	fprintf(stderr, "usage: leave_children fork|spawn|vfork|exec [STEP ARGS...]\n");
	return 2;
}

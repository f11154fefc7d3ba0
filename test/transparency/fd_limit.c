/* Run under a low limit of open files (the case sets it): touches a coroutine, then starts
 * itself again as "child" from a fork child's exec and by posix_spawn, and says how each ended.
 * A child touches a coroutine and exits 3. */
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

extern char **environ;

static void report(const char *how, pid_t pid)
{
	int status = -1;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		printf("%s: exit %d\n", how, WEXITSTATUS(status));
	else
		printf("%s: status %#x\n", how, status);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	tp_touch_coroutine();
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return 3;
	char *child_argv[] = {argv[0], "child", NULL};
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv("/proc/self/exe", child_argv);
		_exit(127);
	}
	report("forked", pid);
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ) != 0)
		pid = -1;
	report("spawned", pid);
	return 0;
}

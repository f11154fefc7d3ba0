/* vfork 8a: the child execs a path that does not exist and _exit(255)s; the parent waits,
 * prints the child's status and exits 0. The child shares the parent's memory until it ends. */
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

int main(void)
{
	tp_touch_coroutine();
	fflush(stdout);
	pid_t pid = vfork();
	if (pid < 0) {
		perror("vfork");
		return 2;
	}
	if (pid == 0) {
		char *argv[] = {"/nonexistent/ctp-transparency", NULL};
		char *envp[] = {NULL};
		execve(argv[0], argv, envp);
		_exit(255);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 2;
	}
	printf("child: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	tp_touch_coroutine();
	printf("parent: done\n");
	return 0;
}

/* Signals 1k: a program started with SIGCHLD ignored (a supervisor's or a script's leftover,
 * which exec keeps): it says so, makes a coroutine, forks a child that exits 3, and waits for
 * it, which with SIGCHLD ignored finds no child (the kernel reaped it): ECHILD. Traced, the
 * program must find the same disposition and the same wait; ctp-run, started the same way,
 * must not wait for ever for an app the kernel reaped for it. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

int main(void)
{
	struct sigaction sa;
	sigaction(SIGCHLD, NULL, &sa);
	printf("SIGCHLD ignored: %s\n", sa.sa_handler == SIG_IGN ? "yes" : "no");
	tp_touch_coroutine();
	fflush(stdout);
	pid_t child = fork();
	if (child == 0)
		_exit(3);
	int status;
	pid_t got = waitpid(child, &status, 0);
	if (got < 0)
		printf("waitpid: %s\n", errno == ECHILD ? "no child (ECHILD)" : strerror(errno));
	else
		printf("waitpid: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

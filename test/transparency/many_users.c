/* Workers that change, all at once, each to a user of its own, as a server's pre-forked workers
 * may: the process (root) forks WORKERS children that wait on a pipe, then lets them go; each
 * changes to user 60000+i and runs this program again through a shell with system(), which
 * makes a switch and exits; each worker exits with what system() returned. The preload grants
 * each new user the collector's socket (user_change_hooks.c): grants made at the same moment
 * must not undo one another, or that worker's shell cannot reach the collector.
 *
 * Run as root; exits 2 otherwise.
 *
 *   many_users | many_users child */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

enum { WORKERS = 24, FIRST_UID = 60000 };

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		tp_touch_coroutine();
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "many_users: must run as root, to change users\n");
		return 2;
	}
	int go[2];
	if (pipe(go) != 0) {
		perror("pipe");
		return 2;
	}
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "exec '%s' child", argv[0]);
	fflush(stdout);
	for (int i = 0; i < WORKERS; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			char c;
			close(go[1]);
			if (read(go[0], &c, 1) != 0 || setgid(FIRST_UID + i) != 0 ||
			    setuid(FIRST_UID + i) != 0)
				_exit(2);
			int ws = system(cmd);
			_exit(WIFEXITED(ws) ? WEXITSTATUS(ws) : 3);
		}
	}
	close(go[0]);
	close(go[1]); /* all go */
	int ended_well = 0, ws;
	while (wait(&ws) > 0)
		ended_well += WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
	printf("%d of %d workers ran their shell's program\n", ended_well, WORKERS);
	return 0;
}

/* A server that starts as root, drops to another user and then forks its workers, as icinga2
 * and many daemons do: the process changes to user and group nobody, makes a few switches, runs
 * this program again through a shell with system() (which makes its switches and exits 7) and
 * with popen() (prints a line, exits 8), then forks a worker that makes its own, forks a helper
 * that execs this program again (exits 4), posix_spawns it (exits 5), vforks a child that
 * closes its fds and execs it (exits 6), as Python's subprocess does, and posix_spawns each
 * PROBE (fd_probe.c: programs that cannot load the preload); each waits for its children and
 * prints how they ended. The tracer's socket is its user's alone (root's): the children and the
 * new images must reach the collector all the same, without a change the program could see (a
 * line on stderr among them).
 *
 * Run as root (it changes its user); exits 2 otherwise, saying why.
 *
 *   fork_as_other_user [--no-shell] [PROBE...]   (--no-shell: without system() and popen())
 *   fork_as_other_user execd | spawned | vforked | shelled | popened   (the program run again) */
#define _GNU_SOURCE
#include <grp.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

enum { ROUNDS = 10, NOBODY = 65534 };

extern char **environ;

static ucontext_t main_ctx, co_ctx;
static char *self; /* argv[0]: an absolute path, as the harness runs it */
static char co_stack[64 * 1024];
static char **probes; /* PROBE...: absolute paths */

static void co_body(void)
{
	for (;;)
		swapcontext(&co_ctx, &main_ctx);
}

/* ROUNDS resumes of one coroutine, each followed by its yield. */
static void ping_pong(void)
{
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_body, 0);
	for (int i = 0; i < ROUNDS; i++)
		swapcontext(&main_ctx, &co_ctx);
}

/* Waits for child pid and prints how it ended. */
static void wait_child(const char *name, pid_t pid)
{
	int ws;
	if (waitpid(pid, &ws, 0) != pid) {
		perror("waitpid");
		exit(2);
	}
	printf("%s: %s %d\n", name, WIFEXITED(ws) ? "exit" : "signal",
	       WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
}

/* Forks a child that runs `body` and exits with `status` (if body returns); prints how it
 * ended. */
static void run_child(const char *name, void (*body)(void), int status)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		body();
		fflush(stdout);
		_exit(status);
	}
	wait_child(name, pid);
}

static void helper(void)
{
	execl(self, "fork_as_other_user", "execd", (char *)NULL);
	perror("execl");
}

/* Starts path with posix_spawn, waits for it and prints how it ended, as `name`. */
static void spawn_and_wait(const char *name, const char *path, char *argv[])
{
	pid_t pid;
	fflush(stdout);
	int rc = posix_spawn(&pid, path, NULL, NULL, argv, environ);
	if (rc != 0) {
		fprintf(stderr, "posix_spawn %s: %s\n", path, strerror(rc));
		exit(2);
	}
	wait_child(name, pid);
}

static void worker(void)
{
	ping_pong();
	run_child("helper", helper, 2);
	spawn_and_wait("spawned", self, (char *[]){"fork_as_other_user", "spawned", NULL});
	fflush(stdout);
	pid_t pid = vfork();
	if (pid < 0) {
		perror("vfork");
		exit(2);
	}
	if (pid == 0) {
		/* Every fd but the standard ones closed before the exec, as Python's does. */
		close_range(3, ~0U, 0);
		execl(self, "fork_as_other_user", "vforked", (char *)NULL);
		_exit(127);
	}
	wait_child("vforked", pid);
	for (char **probe = probes; *probe; probe++)
		spawn_and_wait("probe", *probe, (char *[]){*probe, NULL});
}

/* The program run again by a shell that glibc starts itself (posix_spawn inside libc). */
static void through_shell(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "exec '%s' shelled", self);
	fflush(stdout);
	int ws = system(cmd);
	printf("shelled: exit %d\n", WEXITSTATUS(ws));
	snprintf(cmd, sizeof(cmd), "exec '%s' popened", self);
	FILE *f = popen(cmd, "r");
	if (!f) {
		perror("popen");
		exit(2);
	}
	char line[64];
	while (fgets(line, sizeof(line), f))
		printf("popen read: %s", line);
	ws = pclose(f);
	printf("popened: exit %d\n", WEXITSTATUS(ws));
}

/* The exit status of the program run again as `role`. */
static int rerun(const char *role)
{
	static const char *const roles[] = {"execd", "spawned", "vforked", "shelled", "popened"};
	ping_pong();
	if (strcmp(role, "popened") == 0)
		printf("hello from popened\n");
	for (int i = 0; i < (int)(sizeof(roles) / sizeof(roles[0])); i++)
		if (strcmp(role, roles[i]) == 0)
			return 4 + i;
	return 2;
}

int main(int argc, char **argv)
{
	self = argv[0];
	bool shell = true;
	if (argc > 1 && strcmp(argv[1], "--no-shell") == 0)
		shell = false;
	else if (argc > 1 && argv[1][0] != '/')
		return rerun(argv[1]);
	probes = argv + 1 + !shell;
	if (geteuid() != 0) {
		fprintf(stderr, "fork_as_other_user: must run as root, to change its user\n");
		return 2;
	}
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
		perror("fork_as_other_user: changing to nobody");
		return 2;
	}
	printf("running as uid %d, gid %d\n", (int)getuid(), (int)getgid());
	ping_pong();
	if (shell)
		through_shell();
	run_child("worker", worker, 3);
	return 0;
}

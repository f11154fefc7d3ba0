/* A server that starts as root, drops to another user and then forks its workers, as icinga2
 * and many daemons do: the process changes to user and group nobody, makes a few switches,
 * posix_spawns this program again (which makes its switches and exits 9), runs it through a
 * shell with system() (exits 7) and with popen() (prints a line, exits 8), then forks a worker
 * that makes its own, forks a helper that execs the program again (exits 4), posix_spawns it
 * (exits 5), vforks a child that closes its fds and execs it (exits 6), as Python's subprocess
 * does, and posix_spawns each PROBE (fd_probe.c, programs that cannot load the preload, files
 * that cannot be run), as does a child that only changed its effective user, before the process
 * changed its users; each waits for its children and prints how they ended. The tracer's socket is
 * its user's alone (root's): the children and the new images must reach the collector all the same,
 * without a change the program could see (a line on stderr among them).
 *
 * With --hide-socket, before it changes its user the process enters a mount namespace of its
 * own in which an empty file system covers the directory of the collector's socket (CTP_SOCKET,
 * when traced), as a sandboxed service's view of the file system may lack it; then it runs no
 * shell (system() and popen() cannot be traced there).
 *
 * Run as root (it changes its user); exits 2 otherwise, saying why.
 *
 *   fork_as_other_user [--hide-socket] [PROBE...]
 *   fork_as_other_user execd | spawned | vforked | shelled | popened | direct   (run again) */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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

/* The path of program `name` in this program's directory. */
static void sibling(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%.*s/%s", (int)(strrchr(self, '/') - self), self, name);
}

/* Starts path with posix_spawn and the environment envp, waits for it and prints how it ended,
 * as `name`. */
static void spawn_with_env(const char *name, const char *path, char *argv[], char *envp[])
{
	pid_t pid;
	fflush(stdout);
	int rc = posix_spawn(&pid, path, NULL, NULL, argv, envp);
	if (rc != 0)
		printf("%s: cannot start: %s\n", name, strerror(rc));
	else
		wait_child(name, pid);
}

/* Starts path with posix_spawn, waits for it and prints how it ended, as `name`. */
static void spawn_and_wait(const char *name, const char *path, char *argv[])
{
	spawn_with_env(name, path, argv, environ);
}

/* Each PROBE, then the dynamic fd_probe beside this program with an LD_PRELOAD too long to take
 * the preload as well. */
static void spawn_probes(void)
{
	if (!*probes)
		return;
	for (char **probe = probes; *probe; probe++)
		spawn_and_wait("probe", *probe, (char *[]){*probe, NULL});
	static char long_preload[4200] = "LD_PRELOAD=/";
	memset(long_preload + 12, 'x', sizeof(long_preload) - 13);
	char dynamic[4200];
	sibling("fd_probe", dynamic, sizeof(dynamic));
	spawn_with_env("probe", dynamic, (char *[]){dynamic, NULL}, (char *[]){long_preload, NULL});
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
	spawn_probes();
}

/* The PROBEs and the dynamic fd_probe, started with the effective user changed and the real one
 * not (root): every exec of such a process is in secure-execution mode, which takes no
 * LD_PRELOAD. */
static void seteuid_probes(void)
{
	if (seteuid(NOBODY) != 0) {
		perror("seteuid");
		exit(2);
	}
	/* A dynamic program too, fd_probe beside this one: any other would load the preload. */
	char dynamic[4200];
	sibling("fd_probe", dynamic, sizeof(dynamic));
	spawn_and_wait("probe", dynamic, (char *[]){dynamic, NULL});
	spawn_probes();
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
	static const char *const roles[] = {"execd",   "spawned", "vforked",
					    "shelled", "popened", "direct"};
	ping_pong();
	if (strcmp(role, "popened") == 0)
		printf("hello from popened\n");
	for (int i = 0; i < (int)(sizeof(roles) / sizeof(roles[0])); i++)
		if (strcmp(role, roles[i]) == 0)
			return 4 + i;
	return 2;
}

/* Covers the socket's directory, in a mount namespace of this process's (when traced). */
static bool hide_socket_dir(void)
{
	const char *socket = getenv("CTP_SOCKET");
	const char *slash = socket ? strrchr(socket, '/') : NULL;
	if (!slash)
		return true;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - socket), socket);
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("empty", dir, "tmpfs", 0, NULL) != 0) {
		perror("fork_as_other_user: hiding the socket's directory");
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	self = argv[0];
	bool hide = argc > 1 && strcmp(argv[1], "--hide-socket") == 0;
	if (argc > 1 && !hide && argv[1][0] != '/')
		return rerun(argv[1]);
	probes = argv + 1 + hide;
	if (geteuid() != 0) {
		fprintf(stderr, "fork_as_other_user: must run as root, to change its user\n");
		return 2;
	}
	if (hide && !hide_socket_dir())
		return 2;
	if (*probes)
		run_child("seteuid", seteuid_probes, 0);
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
		perror("fork_as_other_user: changing to nobody");
		return 2;
	}
	printf("running as uid %d, gid %d\n", (int)getuid(), (int)getgid());
	ping_pong();
	spawn_and_wait("direct", self, (char *[]){"fork_as_other_user", "direct", NULL});
	if (!hide)
		through_shell();
	run_child("worker", worker, 3);
	return 0;
}

/* Starts the program argv[1] (an absolute path) every way a traced program may: a fork child's
 * execv and execvp (found in PATH), a vfork child's execve, posix_spawn, posix_spawnp and
 * system(), which runs it from a shell; then, from a coroutine on an 8 KiB stack with a guard
 * page below it (the hooks run on whatever stack the program execs from), posix_spawnp and a
 * vfork child's execve again. Prints how each ended. */
#define _GNU_SOURCE
#include <libgen.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

extern char **environ;

enum { SMALL_STACK = 8 * 1024, GUARD = 4096 };
static const char *program, *name;
static ucontext_t main_context, small_context;

static void report(const char *how, int status)
{
	if (WIFEXITED(status))
		printf("%s: exit %d\n", how, WEXITSTATUS(status));
	else
		printf("%s: status %#x\n", how, status);
	fflush(stdout);
}

static int wait_for(pid_t pid)
{
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void fork_exec(const char *how, bool search)
{
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)(search ? name : program), (char *)how, NULL};
		if (search)
			execvp(name, argv);
		else
			execv(program, argv);
		_exit(127);
	}
	report(how, wait_for(pid));
}

static void vfork_execve(const char *how)
{
	pid_t pid = vfork();
	if (pid == 0) {
		execve(program, (char *[]){(char *)program, (char *)how, NULL}, environ);
		_exit(127);
	}
	report(how, wait_for(pid));
}

static void spawn(const char *how, bool search)
{
	pid_t pid;
	char *argv[] = {(char *)(search ? name : program), (char *)how, NULL};
	int rc = search ? posix_spawnp(&pid, name, NULL, NULL, argv, environ)
			: posix_spawn(&pid, program, NULL, NULL, argv, environ);
	report(how, wait_for(rc == 0 ? pid : -1));
}

static void on_small_stack(void)
{
	spawn("posix_spawnp on a small stack", true);
	vfork_execve("vfork on a small stack");
}

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: foreign_exec /absolute/path/of/program\n");
		return 2;
	}
	program = argv[1];
	char *dir = strdup(program), *file = strdup(program);
	name = basename(file);
	setenv("PATH", dirname(dir), 1);
	fflush(stdout);

	fork_exec("execv", false);
	fork_exec("execvp", true);
	vfork_execve("vfork");
	spawn("posix_spawn", false);
	spawn("posix_spawnp", true);
	char command[4096];
	snprintf(command, sizeof(command), "'%s' system", program);
	report("system", system(command));

	char *stack = mmap(NULL, GUARD + SMALL_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || mprotect(stack, GUARD, PROT_NONE) != 0 ||
	    getcontext(&small_context) != 0) {
		perror("foreign_exec: the small stack");
		return 1;
	}
	small_context.uc_stack.ss_sp = stack + GUARD;
	small_context.uc_stack.ss_size = SMALL_STACK;
	small_context.uc_link = &main_context;
	makecontext(&small_context, on_small_stack, 0);
	if (swapcontext(&main_context, &small_context) != 0) {
		perror("foreign_exec: swapcontext");
		return 1;
	}
	return 0;
}

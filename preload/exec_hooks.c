/* Children stay traced. A program that execs (or spawns) gets the preload again through
 * LD_PRELOAD, and the same collector through CTP_SOCKET; both are put back into the child's
 * environment when the program passes one without them (many daemons and shells build their
 * own). Before an exec the collector is told, so that it ends the old image without an `exit`
 * line; CTP_CORO_BASE carries the next coroutine id across it, so that ids stay unique within
 * the pid. glibc's exec* functions call execve internally, not through the PLT: each is hooked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "preload.h"
#include "real.h"

extern char **environ;

enum { MAX_EXEC_ARGS = 4096, ENV_EXTRA = 16, VAR_MAX = 4096 };

/* The tracing variables as they were at start: the program may have unset them since. */
static char inherited[ENV_EXTRA][VAR_MAX];
static int inherited_count;
static char preload_path[VAR_MAX];

void ctp_exec_remember_environment(void)
{
	Dl_info info;
	if (dladdr((void *)ctp_exec_remember_environment, &info) && info.dli_fname)
		snprintf(preload_path, sizeof(preload_path), "%s", info.dli_fname);
	for (char **e = environ; e && *e && inherited_count < ENV_EXTRA - 2; e++)
		if (strncmp(*e, "CTP_", 4) == 0 && strncmp(*e, "CTP_CORO_BASE=", 14) != 0 &&
		    strlen(*e) < VAR_MAX)
			strcpy(inherited[inherited_count++], *e);
}

static bool has_var(char *const envp[], const char *var, size_t name_len)
{
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, var, name_len) == 0 && (*e)[name_len - 1] == '=')
			return true;
	return false;
}

static const char *find_var(char *const envp[], const char *name_eq)
{
	size_t n = strlen(name_eq);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name_eq, n) == 0)
			return *e + n;
	return NULL;
}

static size_t child_environment_bytes(char *const envp[])
{
	size_t count = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	return (count + ENV_EXTRA + 1) * sizeof(char *) + 2 * VAR_MAX;
}

/* The child's environment: the program's, plus what tracing needs. Built in fresh pages (an exec
 * path, so a mapping is fine: the exec frees it; free_child_environment where there is none). */
static char **child_environment(char *const envp[])
{
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING)
		return (char **)envp;
	size_t count = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	size_t bytes = child_environment_bytes(envp);
	char **out = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED)
		return (char **)envp;
	char *strings = (char *)(out + count + ENV_EXTRA + 1);
	size_t n = 0;

	const char *old_preload = find_var(envp, "LD_PRELOAD=");
	char *preload = strings;
	if (!old_preload || !strstr(old_preload, preload_path)) {
		int w = snprintf(preload, VAR_MAX, "LD_PRELOAD=%s%s%s", preload_path,
				 old_preload && *old_preload ? ":" : "",
				 old_preload ? old_preload : "");
		if (w < 0 || w >= VAR_MAX)
			preload = NULL; /* too long to add to: leave the program's as it is */
	} else {
		preload = NULL;
	}
	char *base = strings + VAR_MAX;
	snprintf(base, VAR_MAX, "CTP_CORO_BASE=%llu",
		 (unsigned long long)CTP_LOAD_RELAXED(&ctp_seg.hdr->next_coro_id));

	for (char *const *e = envp; e && *e; e++) {
		if ((preload && strncmp(*e, "LD_PRELOAD=", 11) == 0) ||
		    strncmp(*e, "CTP_CORO_BASE=", 14) == 0)
			continue;
		out[n++] = *e;
	}
	if (preload)
		out[n++] = preload;
	out[n++] = base;
	for (int i = 0; i < inherited_count; i++) {
		size_t name_len = strchr(inherited[i], '=') - inherited[i] + 1;
		if (!has_var(envp, inherited[i], name_len))
			out[n++] = inherited[i];
	}
	out[n] = NULL;
	return out;
}

static void free_child_environment(char **env, char *const envp[])
{
	if (env != (char **)envp)
		munmap(env, child_environment_bytes(envp));
}

/* Called just before the image is replaced. Not in a vfork child: it shares our memory and our
 * connection, and its exec is not ours. */
static void before_exec(void)
{
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING &&
	    (uint32_t)syscall(SYS_getpid) == ctp_proc.pid)
		ctp_connection_send_exec();
}

CTP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	CTP_REAL(execve);
	before_exec();
	return real_execve(path, argv, child_environment(envp));
}

CTP_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

CTP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CTP_REAL(execvpe);
	before_exec();
	return real_execvpe(file, argv, child_environment(envp));
}

CTP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

CTP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	CTP_REAL(fexecve);
	before_exec();
	return real_fexecve(fd, argv, child_environment(envp));
}

CTP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	CTP_REAL(execveat);
	before_exec();
	return real_execveat(dirfd, path, argv, child_environment(envp), flags);
}

/* execl, execlp, execle: the list becomes an argv on the stack. */
#define COLLECT_ARGS(first, argv, ap)                                                              \
	do {                                                                                       \
		int i_ = 0;                                                                        \
		argv[i_++] = (char *)(first);                                                      \
		while (i_ < MAX_EXEC_ARGS - 1 && (argv[i_] = va_arg(ap, char *)) != NULL)          \
			i_++;                                                                      \
		argv[i_] = NULL;                                                                   \
	} while (0)

CTP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap);
	va_end(ap);
	return execve(path, argv, environ);
}

CTP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap);
	va_end(ap);
	return execvpe(file, argv, environ);
}

CTP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXEC_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(arg, argv, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

CTP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CTP_REAL(posix_spawn);
	char **env = child_environment(envp);
	int rc = real_posix_spawn(pid, path, actions, attr, argv, env);
	free_child_environment(env, envp);
	return rc;
}

CTP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CTP_REAL(posix_spawnp);
	char **env = child_environment(envp);
	int rc = real_posix_spawnp(pid, file, actions, attr, argv, env);
	free_child_environment(env, envp);
	return rc;
}

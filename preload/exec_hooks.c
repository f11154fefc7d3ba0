/* Children stay traced. A program that execs (or spawns) gets the preload again through
 * LD_PRELOAD, and the same collector through CTP_SOCKET; both are put back into the child's
 * environment when the program passes one without them (many daemons and shells build their
 * own). Before an exec the collector is told, so that it ends the old image without an `exit`
 * line; CTP_CORO_BASE carries the next coroutine id across it, so that ids stay unique within
 * the pid; and CTP_CONNECTION_FD a connection, when the new image could not reach the
 * collector's socket by its path (connection.h). glibc's exec* functions call execve internally,
 * not through the PLT: each is hooked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "preload/compiler.h"
#include "preload/connection.h"
#include "preload/exec_hooks.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/segment.h"
#include "preload/threads.h"

extern char **environ;

enum { ENV_EXTRA = 16, VAR_MAX = 4096 };

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
		    strncmp(*e, CTP_CONNECTION_FD_VAR "=", sizeof(CTP_CONNECTION_FD_VAR)) != 0 &&
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
	return (count + ENV_EXTRA + 1) * sizeof(char *) + 3 * VAR_MAX;
}

/* Whether envp lacks something a traced child needs: the preload, or a tracing variable. */
static bool lacks_tracing(char *const envp[])
{
	const char *old_preload = find_var(envp, "LD_PRELOAD=");
	if (!old_preload || !strstr(old_preload, preload_path))
		return true;
	for (int i = 0; i < inherited_count; i++) {
		size_t name_len = strchr(inherited[i], '=') - inherited[i] + 1;
		if (!has_var(envp, inherited[i], name_len))
			return true;
	}
	return false;
}

static void drop_handover(int *handover);

/* The child's environment in `mem` (child_environment_bytes(envp) of it): the program's, plus
 * what tracing needs; with the connection *handover when it is not -1 (dropped when the
 * environment cannot name the preload: the image would not take it). */
static char **fill_environment(char *const envp[], void *mem, bool same_process, int *handover)
{
	size_t count = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	char **out = mem;
	char *strings = (char *)(out + count + ENV_EXTRA + 1);
	size_t n = 0;

	const char *old_preload = find_var(envp, "LD_PRELOAD=");
	char *preload = strings;
	if (!old_preload || !strstr(old_preload, preload_path)) {
		int w = snprintf(preload, VAR_MAX, "LD_PRELOAD=%s%s%s", preload_path,
				 old_preload && *old_preload ? ":" : "",
				 old_preload ? old_preload : "");
		if (w < 0 || w >= VAR_MAX) {
			preload = NULL; /* too long to add to: leave the program's as it is */
			drop_handover(handover);
		}
	} else {
		preload = NULL;
	}
	/* The same process gets a new image: its coroutine ids go on where they were. */
	char *base = NULL;
	if (same_process) {
		base = strings + VAR_MAX;
		snprintf(base, VAR_MAX, "CTP_CORO_BASE=%llu",
			 (unsigned long long)CTP_LOAD_RELAXED(&ctp_seg.hdr->next_coro_id));
	}
	char *connection = NULL;
	if (*handover >= 0) {
		connection = strings + 2 * VAR_MAX;
		snprintf(connection, VAR_MAX, "%s=%d:%d", CTP_CONNECTION_FD_VAR, *handover,
			 ctp_proc.collector_pid);
	}
	for (char *const *e = envp; e && *e; e++) {
		if ((preload && strncmp(*e, "LD_PRELOAD=", 11) == 0) ||
		    (base && strncmp(*e, "CTP_CORO_BASE=", 14) == 0) ||
		    strncmp(*e, CTP_CONNECTION_FD_VAR "=", sizeof(CTP_CONNECTION_FD_VAR)) == 0)
			continue;
		out[n++] = *e;
	}
	if (preload)
		out[n++] = preload;
	if (base)
		out[n++] = base;
	if (connection)
		out[n++] = connection;
	for (int i = 0; i < inherited_count; i++) {
		size_t name_len = strchr(inherited[i], '=') - inherited[i] + 1;
		if (!has_var(envp, inherited[i], name_len))
			out[n++] = inherited[i];
	}
	out[n] = NULL;
	return out;
}

/* A connection made for the new image that its environment cannot name: closed, so that the
 * image does not inherit an fd it cannot know of. */
static void drop_handover(int *handover)
{
	ctp_connection_exec_failed(*handover);
	*handover = -1;
}

/* The environment to exec with, naming the connection *handover (from ctp_connection_for_exec,
 * -1 for none; dropped when there is no room to name it). In the process itself it is built in
 * fresh pages (the exec frees them; release_environment when the exec failed). A vfork child
 * must not map anything (the pages would stay in its parent): it passes the program's
 * environment on when it has all that tracing needs and no connection to name, else builds it
 * in `stack_mem`, room its caller made on its own stack. */
static char **child_environment(char *const envp[], void *stack_mem, int *handover)
{
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING) {
		drop_handover(handover); /* tracing stopped since it was made */
		return (char **)envp;
	}
	if (ctp_in_vfork_child()) {
		if (!stack_mem) {
			drop_handover(handover);
			return (char **)envp;
		}
		return fill_environment(envp, stack_mem, false, handover);
	}
	bool same_process = (uint32_t)syscall(SYS_getpid) == ctp_proc.pid;
	void *mem = mmap(NULL, child_environment_bytes(envp), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		drop_handover(handover);
		return (char **)envp;
	}
	return fill_environment(envp, mem, same_process, handover);
}

/* After an exec that failed, or after a posix_spawn: the connection handed over is the new
 * image's alone (its copy here is closed). */
static void release_environment(char **env, char *const envp[], int handover)
{
	int saved_errno = errno;
	if (env != (char **)envp && !ctp_in_vfork_child())
		munmap(env, child_environment_bytes(envp));
	ctp_connection_exec_failed(handover);
	errno = saved_errno;
}

/* Room for a vfork child's environment on its stack, in the hook's own frame; none when it is
 * not a vfork child, when the program's environment will do (it has what tracing needs and
 * there is no connection to name), or when it would not fit in what a small stack can spare. */
enum { VFORK_ENV_MAX = 64 * 1024 };
#define VFORK_ENV_ROOM(envp, handover)                                                             \
	(ctp_in_vfork_child() && (lacks_tracing(envp) || (handover) >= 0) &&                       \
			 child_environment_bytes(envp) <= VFORK_ENV_MAX                            \
		 ? __builtin_alloca(child_environment_bytes(envp))                                 \
		 : NULL)

/* Declares `handover` and `env`, the connection and environment the image of `target` gets (a
 * macro: a vfork child's room is made in the hook's own frame). */
#define CHILD_ENVIRONMENT(target, envp, env, handover)                                             \
	int handover = ctp_connection_for_exec(&(target));                                         \
	char **env = child_environment(envp, VFORK_ENV_ROOM(envp, handover), &handover)

CTP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	CTP_REAL(execve);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_PATH(path), envp, env, handover);
	int rc = real_execve(path, argv, env);
	release_environment(env, envp, handover);
	return rc;
}

CTP_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

CTP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CTP_REAL(execvpe);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_SEARCH(file), envp, env, handover);
	int rc = real_execvpe(file, argv, env);
	release_environment(env, envp, handover);
	return rc;
}

CTP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

CTP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	CTP_REAL(fexecve);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_FD(fd), envp, env, handover);
	int rc = real_fexecve(fd, argv, env);
	release_environment(env, envp, handover);
	return rc;
}

CTP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	CTP_REAL(execveat);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_AT(dirfd, path, flags), envp, env, handover);
	int rc = real_execveat(dirfd, path, argv, env, flags);
	release_environment(env, envp, handover);
	return rc;
}

/* execl, execlp, execle: the list becomes an argv on the stack, of exactly its length (the caller
 * may run on a small coroutine stack, or be a vfork child on its parent's). */
static size_t count_args(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, char *) != NULL)
		n++;
	return n;
}

#define COLLECT_ARGS(first, ap, argv, count)                                                       \
	do {                                                                                       \
		argv[0] = (char *)(first);                                                         \
		for (size_t i_ = 1; i_ <= (count); i_++)                                           \
			argv[i_] = va_arg(ap, char *); /* the last one is the NULL */              \
	} while (0)

/* Declares `argv`, the list that starts with `first` and goes on in `ap`, as an array in the
 * calling frame (a macro, not a function, for that reason); `ap` is left after the list's
 * NULL, where execle's envp follows. */
#define ARGV_FROM_LIST(first, ap, argv)                                                            \
	va_list counting_;                                                                         \
	va_copy(counting_, ap);                                                                    \
	size_t count_ = count_args(counting_);                                                     \
	va_end(counting_);                                                                         \
	char *argv[count_ + 1];                                                                    \
	COLLECT_ARGS(first, ap, argv, count_)

CTP_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	ARGV_FROM_LIST(arg, ap, argv);
	va_end(ap);
	return execve(path, argv, environ);
}

CTP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	ARGV_FROM_LIST(arg, ap, argv);
	va_end(ap);
	return execvpe(file, argv, environ);
}

CTP_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	ARGV_FROM_LIST(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* After a posix_spawn: tells the collector of the child, whose new image may say hello after the
 * program has gone. */
static void announce_spawned(int rc, const pid_t *pid)
{
	if (rc != 0)
		return;
	/* A child nobody can name is announced as a fork that no hello will match: waited for
	 * as long as the grace period allows. */
	if (pid)
		ctp_connection_send_spawned(*pid);
	else
		ctp_connection_send_forked();
}

CTP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CTP_REAL(posix_spawn);
	CHILD_ENVIRONMENT(CTP_EXEC_PATH(path), envp, env, handover);
	int rc = real_posix_spawn(pid, path, actions, attr, argv, env);
	release_environment(env, envp, handover);
	announce_spawned(rc, pid);
	return rc;
}

CTP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CTP_REAL(posix_spawnp);
	CHILD_ENVIRONMENT(CTP_EXEC_SEARCH(file), envp, env, handover);
	int rc = real_posix_spawnp(pid, file, actions, attr, argv, env);
	release_environment(env, envp, handover);
	announce_spawned(rc, pid);
	return rc;
}

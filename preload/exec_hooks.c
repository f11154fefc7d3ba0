/* Children stay traced. A program that execs (or spawns) gets the preload again through
 * LD_PRELOAD, and the same collector through CTP_SOCKET; both are put back into the child's
 * environment when the program passes one without them (many daemons and shells build their
 * own). Before an exec the collector is told, so that it ends the old image without an `exit`
 * line; CTP_CORO_BASE carries the next coroutine id across it, so that ids stay unique within
 * the pid; and CTP_CONNECTION_FD a connection, when the new image could not reach the
 * collector's socket by its path (connection.h). A new image whose loader cannot take the
 * preload (another ELF class, machine or C library: exec_target.h) gets the program's
 * environment with the preload taken out of LD_PRELOAD instead: glibc's i386 loader would print
 * an error into the program's stderr, musl's would not start it at all. glibc's exec* functions
 * call execve internally, not through the PLT: each is hooked. */
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
#include "preload/exec_target.h"
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

/* What environment_without_preload builds in: the program's pointers and one LD_PRELOAD. */
static size_t without_preload_bytes(char *const envp[])
{
	size_t count = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	const char *old_preload = find_var(envp, "LD_PRELOAD=");
	return (count + 1) * sizeof(char *) + sizeof("LD_PRELOAD=") +
	       (old_preload ? strlen(old_preload) : 0);
}

static size_t environment_bytes(char *const envp[], bool keep_out)
{
	return keep_out ? without_preload_bytes(envp) : child_environment_bytes(envp);
}

/* Fresh pages for an environment, headed by their size, so that unmap_environment gives back
 * as many (the exec frees them when it succeeds). NULL when there are none. */
enum { MAP_HEADER = 16 }; /* keeps the pointers after it aligned as mmap's */
static void *map_environment(size_t bytes)
{
	void *mem = mmap(NULL, MAP_HEADER + bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	*(size_t *)mem = MAP_HEADER + bytes;
	return (char *)mem + MAP_HEADER;
}

static void unmap_environment(void *env)
{
	char *mem = (char *)env - MAP_HEADER;
	munmap(mem, *(size_t *)mem);
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

/* Whether `entry`, one path of LD_PRELOAD, names this preload: its path, or another path to a
 * file of its name (the loader may have found it by a name without a directory). */
static bool names_this_preload(const char *entry, size_t len)
{
	const char *own_name = strrchr(preload_path, '/');
	own_name = own_name ? own_name + 1 : preload_path;
	const char *name = memrchr(entry, '/', len);
	name = name ? name + 1 : entry;
	size_t own_len = strlen(own_name);
	return (len == strlen(preload_path) && memcmp(entry, preload_path, len) == 0) ||
	       ((size_t)(entry + len - name) == own_len && memcmp(name, own_name, own_len) == 0);
}

/* For an image whose loader cannot take the preload: the program's environment in `mem`
 * (without_preload_bytes(envp) of it), its LD_PRELOAD without this preload, or without
 * LD_PRELOAD when nothing else was in it; nothing added. envp itself when it does not name the
 * preload. */
static char **environment_without_preload(char *const envp[], void *mem)
{
	const char *old_preload = find_var(envp, "LD_PRELOAD=");
	if (!old_preload || !preload_path[0])
		return (char **)envp;
	size_t count = 0;
	for (char *const *e = envp; e && *e; e++)
		count++;
	char **out = mem;
	char *preload = (char *)(out + count + 1);
	size_t used = strlen("LD_PRELOAD=");
	memcpy(preload, "LD_PRELOAD=", used);
	bool dropped = false;
	/* The loader splits the list at spaces and colons. */
	for (const char *p = old_preload; *p;) {
		size_t len = strcspn(p, " :");
		if (len && names_this_preload(p, len)) {
			dropped = true;
		} else if (len) {
			if (used > strlen("LD_PRELOAD="))
				preload[used++] = ':';
			memcpy(preload + used, p, len);
			used += len;
		}
		p += len;
		p += strspn(p, " :");
	}
	preload[used] = 0;
	if (!dropped)
		return (char **)envp;
	size_t n = 0;
	for (char *const *e = envp; e && *e; e++) {
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0) {
			if (used > strlen("LD_PRELOAD="))
				out[n++] = preload;
			continue;
		}
		out[n++] = *e;
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
 * -1 for none; dropped when there is no room to name it); for an image whose loader cannot take
 * the preload (`keep_out`), the program's without the preload, whether this process traces or
 * not. In the process itself it is built in fresh pages (map_environment; release_environment
 * gives them back when the exec failed). A vfork child must not map anything (the pages
 * would stay in its parent): it passes the program's environment on when it has all that
 * tracing needs and no connection to name, else builds it in `stack_mem`, room its caller made
 * on its own stack. */
static char **child_environment(char *const envp[], bool keep_out, void *stack_mem, int *handover)
{
	if (keep_out) {
		bool mapped = !ctp_in_vfork_child();
		void *mem = mapped ? map_environment(without_preload_bytes(envp)) : stack_mem;
		char **env = mem ? environment_without_preload(envp, mem) : (char **)envp;
		if (env == (char **)envp && mem && mapped)
			unmap_environment(mem);
		return env;
	}
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
	void *mem = map_environment(child_environment_bytes(envp));
	if (!mem) {
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
		unmap_environment(env);
	ctp_connection_exec_failed(handover);
	errno = saved_errno;
}

/* After an exec or spawn that used env: gives back what env and the connection handed over took,
 * and says whether to call it again with the program's own environment. The kernel refuses an
 * environment past its limit (E2BIG; a quarter of the stack limit for arguments and environment
 * together), and the tracer's variables are a few hundred bytes more than the program's, which
 * may lie just under it: the call is made again with the program's own, as untraced (its image
 * is traced only if that environment says so). `failed`: errno of a failed exec, or what
 * posix_spawn returned; 0 for success. */
static bool retry_with_own_environment(int failed, char **env, char *const envp[], int handover,
				       const char *what)
{
	bool retry = failed == E2BIG && env != (char **)envp;
	release_environment(env, envp, handover);
	if (retry)
		ctp_log("the tracer's variables make the environment too large to start ", what,
			" (E2BIG): trying again with the program's own, untraced");
	return retry;
}

/* Room for a vfork child's environment on its stack, in the hook's own frame; none when it is
 * not a vfork child, when the program's environment will do (it has what tracing needs, there
 * is no connection to name and no preload to keep out), or when it would not fit in what a
 * small stack can spare. */
enum { VFORK_ENV_MAX = 64 * 1024 };
#define VFORK_ENV_ROOM(envp, keep_out, handover)                                                   \
	(ctp_in_vfork_child() && ((keep_out) || lacks_tracing(envp) || (handover) >= 0) &&         \
			 environment_bytes(envp, keep_out) <= VFORK_ENV_MAX                        \
		 ? __builtin_alloca(environment_bytes(envp, keep_out))                             \
		 : NULL)

/* Declares `handover` and `env`, the connection and environment the image of `target` gets (a
 * macro: a vfork child's room is made in the hook's own frame). */
#define CHILD_ENVIRONMENT(target, envp, env, handover)                                             \
	enum ctp_exec_image image_ = ctp_exec_target_image(&(target));                             \
	bool keep_out_ = image_ == CTP_EXEC_IMAGE_OTHER_LOADER;                                    \
	int handover = ctp_connection_for_exec(image_ == CTP_EXEC_IMAGE_LOADS_PRELOAD);            \
	char **env = child_environment(envp, keep_out_, VFORK_ENV_ROOM(envp, keep_out_, handover), \
				       &handover)

CTP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	CTP_REAL(execve);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_PATH(path), envp, env, handover);
	int rc = real_execve(path, argv, env);
	if (retry_with_own_environment(errno, env, envp, handover, path))
		rc = real_execve(path, argv, envp);
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
	if (retry_with_own_environment(errno, env, envp, handover, file))
		rc = real_execvpe(file, argv, envp);
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
	if (retry_with_own_environment(errno, env, envp, handover, argv[0] ? argv[0] : "fexecve"))
		rc = real_fexecve(fd, argv, envp);
	return rc;
}

CTP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	CTP_REAL(execveat);
	ctp_connection_send_exec(); /* just before the image is replaced */
	CHILD_ENVIRONMENT(CTP_EXEC_AT(dirfd, path, flags), envp, env, handover);
	int rc = real_execveat(dirfd, path, argv, env, flags);
	if (retry_with_own_environment(errno, env, envp, handover, path))
		rc = real_execveat(dirfd, path, argv, envp, flags);
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
	/* Made again with the program's environment: not announced (it traces the child or not). */
	if (retry_with_own_environment(rc, env, envp, handover, path))
		return real_posix_spawn(pid, path, actions, attr, argv, envp);
	announce_spawned(rc, pid);
	return rc;
}

CTP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CTP_REAL(posix_spawnp);
	CHILD_ENVIRONMENT(CTP_EXEC_SEARCH(file), envp, env, handover);
	int rc = real_posix_spawnp(pid, file, actions, attr, argv, env);
	/* Made again with the program's environment: not announced (it traces the child or not). */
	if (retry_with_own_environment(rc, env, envp, handover, file))
		return real_posix_spawnp(pid, file, actions, attr, argv, envp);
	announce_spawned(rc, pid);
	return rc;
}

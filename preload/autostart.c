/* The plain form: `LD_PRELOAD=libctp_preload.so ./app`, with no ctp-run. The preload then starts
 * a collector of its own (ctp-collector, found beside the library), writing ctp-<pid>.jsonl.zst
 * in the working directory or where CTP_OUTPUT says, and points its own children at it through
 * CTP_SOCKET. The collector runs detached (its own session, reparented away from the app), so
 * the app never sees it as a child and a Ctrl-C to the app does not cut the trace short; it
 * ends by itself a moment after the last traced process has gone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctp/close_fds.h"
#include "ctp/run_dir_base.h"
#include "preload/autostart.h"
#include "preload/own_fds.h"
#include "preload/process.h"

/* A collector listens within a few milliseconds of its start. One that takes longer than this
 * (stuck, or a machine thrashing) is not worth holding the program up for: it then runs
 * untraced, and the collector, finding nobody waiting, ends (collector/loop.c). */
enum { PATH_BYTES = 4096, READY_TIMEOUT_MS = 2000 };

/* Paths live here rather than on the stack: the collector is started once, from the program's
 * start, on its main thread, whose stack a small `ulimit -s` leaves short (four paths of 4 KiB
 * overflowed a stack of 16 KiB that the untraced program lives in). */
static char socket_path[PATH_BYTES];
static char library_dir[PATH_BYTES], collector_path[PATH_BYTES], run_dir[PATH_BYTES],
	output_path[PATH_BYTES];

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* ctp-collector beside the library: the build tree BUILD/preload -> BUILD/collector (first: no
 * installed layout has it), the installed layout PREFIX/lib/<arch>/ctp/libctp_preload.so ->
 * PREFIX/bin (CTP_PKGLIB_TO_BIN, as configured), or older ones PREFIX/lib[/<arch>]. CTP_COLLECTOR
 * names it explicitly. */
static bool find_collector(char *out, size_t size)
{
	const char *env = getenv("CTP_COLLECTOR");
	if (env && *env) {
		snprintf(out, size, "%s", env);
		return executable(out);
	}
	Dl_info info;
	if (!dladdr((void *)find_collector, &info) || !info.dli_fname)
		return false;
	char *dir = library_dir;
	snprintf(dir, PATH_BYTES, "%s", info.dli_fname);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = 0;
	static const char *const candidates[] = {"../collector/ctp-collector",
						 CTP_PKGLIB_TO_BIN "/ctp-collector",
						 "../bin/ctp-collector", "../../bin/ctp-collector"};
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		int n = snprintf(out, size, "%s/%s", dir, candidates[i]);
		if (n > 0 && (size_t)n < size && executable(out))
			return true;
	}
	return false;
}

static bool make_run_dir(char *out, size_t size)
{
	const char *bases[CTP_RUN_DIR_BASES];
	size_t count = ctp_run_dir_bases(bases);
	for (size_t i = 0; i < count; i++) {
		int n = snprintf(out, size, "%s/ctp-%u-XXXXXX", bases[i], ctp_proc.pid);
		if (n > 0 && (size_t)n + 8 < size && mkdtemp(out))
			return true; /* mkdtemp makes it 0700 */
	}
	return false;
}

/* The app's environment without LD_PRELOAD, compacted in place (the grandchild's own copy): the
 * collector reads its settings there (CTP_HOLD_MS, CTP_SPOOL_MB, TMPDIR, the debug file cache
 * under CTP_CACHE_DIR or HOME, DEBUGINFOD_URLS), as it does under ctp-run, but must not load
 * the preload, nor whatever else the app was given to preload. */
static char **collector_environment(void)
{
	static char *empty[] = {NULL};
	if (environ == NULL)
		return empty;
	char **kept = environ;
	for (char **e = environ; *e != NULL; e++) {
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			*kept++ = *e;
	}
	*kept = NULL;
	return environ;
}

/* In the grandchild: raw syscalls and its own copy of memory, no locks the app may hold. */
static void exec_collector(const char *collector, char *const argv[], int ready_fd)
{
	syscall(SYS_setsid);
	int devnull = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
	if (devnull >= 0) {
		syscall(SYS_dup2, devnull, 0);
		syscall(SYS_dup2, devnull, 1);
	}
	/* Nothing of the app's but stderr, for the collector's own messages. */
	ctp_close_fds_but(3, ready_fd);
	syscall(SYS_execve, collector, argv, collector_environment());
	syscall(SYS_exit_group, 127);
}

static bool wait_ready(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char buf[8];
	if (poll(&p, 1, READY_TIMEOUT_MS) != 1)
		return false;
	return read(fd, buf, sizeof(buf)) > 0 && buf[0] == 'r';
}

bool ctp_autostart_collector(void)
{
	char *collector = collector_path, *dir = run_dir, *output = output_path, ready_arg[16];
	if (!find_collector(collector, PATH_BYTES)) {
		ctp_log("LD_PRELOAD without ctp-run, and no ctp-collector beside the library: "
			"running untraced (set CTP_COLLECTOR)",
			NULL, NULL);
		return false;
	}
	if (!make_run_dir(dir, PATH_BYTES)) {
		ctp_log("cannot make a private run directory: ", strerror(errno), NULL);
		return false;
	}
	const char *out = getenv("CTP_OUTPUT");
	if (out && *out)
		snprintf(output, PATH_BYTES, "%s", out);
	else
		snprintf(output, PATH_BYTES, "ctp-%u.jsonl.zst", ctp_proc.pid);
	int n = snprintf(socket_path, sizeof(socket_path), "%s/sock", dir);
	if (n < 0 || (size_t)n >= sizeof(socket_path))
		return false;

	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0)
		return false;
	/* The ready fd must survive the exec: a copy without close-on-exec, above the collector's
	 * stdin, stdout and stderr (the app may have closed its own, and the pipe got 0-2). */
	int ready_fd = ctp_own_fd_dup_high_inherited(pipe_fds[1]);
	if (ready_fd < 0) {
		syscall(SYS_close, pipe_fds[0]);
		syscall(SYS_close, pipe_fds[1]);
		ctp_log("no free file descriptor to start the collector with: running untraced",
			NULL, NULL);
		return false;
	}
	snprintf(ready_arg, sizeof(ready_arg), "%d", ready_fd);
	char *const argv[] = {
		"ctp-collector", "--socket", socket_path,	    "--output", output,
		"--ready-fd",	 ready_arg,  "--remove-socket-dir", NULL};

	/* Raw forks: no atfork handlers of the app's, no lock taken in the children. */
	long child = syscall(SYS_fork);
	if (child == 0) {
		if (syscall(SYS_fork) == 0)
			exec_collector(collector, argv, ready_fd);
		syscall(SYS_exit_group, 0);
	}
	syscall(SYS_close, pipe_fds[1]);
	if (ready_fd >= 0)
		syscall(SYS_close, ready_fd);
	if (child > 0)
		syscall(SYS_wait4, (pid_t)child, NULL, 0, NULL);
	bool ready = child > 0 && wait_ready(pipe_fds[0]);
	syscall(SYS_close, pipe_fds[0]);
	if (!ready) {
		/* Its run directory goes too: a collector that failed left nothing else in it, and
		 * one still starting then finds no place to listen and ends. */
		unlink(socket_path);
		rmdir(dir);
		ctp_log("the collector did not start (", collector, "): running untraced");
		return false;
	}
	setenv("CTP_SOCKET", socket_path, 1); /* children find the same collector */
	ctp_proc.config.socket_path = socket_path;
	ctp_log("tracing to ", output, NULL);
	return true;
}

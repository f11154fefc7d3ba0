/* Run directories that killed runs left behind. A run removes its directory at its end, and so
 * does the plain form's collector; a run whose ctp-run and collector were both killed with
 * SIGKILL (or a machine that lost power) leaves it, with the socket in it, in a directory that
 * may be /tmp. ctp-run sweeps them from the base it makes its own in, before making it.
 *
 * A directory is left only when nothing can be using it: its name is one of ours and names the
 * process that made it (ctp-run's `ctp-run.PID.XXXXXX`, the plain form's `ctp-PID-XXXXXX`, the
 * traced program's pid), that process is gone, it is a real directory of this user's that
 * nobody else may write, it holds nothing but `sock`, and no process listens on that socket
 * (a collector still draining a killed run does). Anything else is kept: a directory
 * this cannot judge costs a few bytes, one removed under a live run would cost its trace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector/run.h"

enum { SUFFIX_LEN = 6 }; /* mkdtemp's XXXXXX */

/* The pid in a run directory's name, 0 when the name is not one of ours. */
static pid_t pid_in_name(const char *name)
{
	const char *p;
	char sep;
	if (strncmp(name, "ctp-run.", 8) == 0) {
		p = name + 8;
		sep = '.';
	} else if (strncmp(name, "ctp-", 4) == 0) {
		p = name + 4;
		sep = '-';
	} else {
		return 0;
	}
	char *end;
	errno = 0;
	long pid = strtol(p, &end, 10);
	if (end == p || *p < '0' || *p > '9' || errno || pid <= 0 || pid > 0x7fffffff ||
	    *end != sep || strlen(end + 1) != SUFFIX_LEN)
		return 0;
	return (pid_t)pid;
}

static bool process_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* Whether the directory (open as dfd) holds nothing but a socket named sock. */
static bool holds_only_a_socket(int dfd)
{
	int fd = dup(dfd);
	if (fd < 0)
		return false;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool only = true;
	struct dirent *e;
	while (only && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		only = strcmp(e->d_name, "sock") == 0 &&
		       fstatat(dfd, "sock", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
	}
	closedir(d);
	return only;
}

/* Whether a process listens on the socket in the directory (open as dfd): a connection is
 * refused only when none does. Asked by connecting, not by reading /proc/net/unix, which lists
 * the sockets of this network namespace alone: a run in a container that shares the base
 * directory is reached through the file as any other. Non-blocking, so that a listener whose
 * backlog is full answers at once (and counts as one). A connection that closes before its hello
 * is nothing to a collector. */
static bool someone_listens(int dfd)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/proc/self/fd/%d/sock", dfd);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	bool refused =
		connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 && errno == ECONNREFUSED;
	close(fd);
	return !refused;
}

static void sweep_one(int base_fd, const char *name)
{
	pid_t pid = pid_in_name(name);
	if (pid == 0 || process_exists(pid))
		return;
	int dfd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	struct stat st;
	if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 022) == 0 &&
	    holds_only_a_socket(dfd) && !someone_listens(dfd)) {
		unlinkat(dfd, "sock", 0);
		unlinkat(base_fd, name, AT_REMOVEDIR);
	}
	close(dfd);
}

void ctp_run_sweep_stale_dirs(const char *base)
{
	int base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_fd < 0)
		return;
	int fd = dup(base_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		close(base_fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "ctp-", 4) == 0 &&
		    (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN))
			sweep_one(base_fd, e->d_name);
	closedir(d);
	close(base_fd);
}

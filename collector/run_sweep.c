/* Run directories that killed runs left behind. A run removes its directory at its end, and so
 * does the plain form's collector; a run whose ctp-run and collector were both killed with
 * SIGKILL (or a machine that lost power) leaves it, with the socket in it, in a directory that
 * may be /tmp. ctp-run sweeps them from the base it makes its own in, before making it.
 *
 * A directory is left only when nothing can be using it: its name is one of ours and names the
 * process that made it (ctp-run's `ctp-run.PID.XXXXXX`, the plain form's `ctp-PID-XXXXXX`, the
 * traced program's pid), that process is gone, it is a real directory of this user's that
 * nobody else may write, it holds nothing but `sock`, and no process has that socket bound
 * (a collector still draining a killed run listens on it). Anything else is kept: a directory
 * this cannot judge costs a few bytes, one removed under a live run would cost its trace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Whether some process has a Unix socket bound in run directory `name`, as /proc/net/unix lists
 * them (a bound path is the last field of a line). Matched on the path's last two parts, which
 * mkdtemp made unique: the run that bound it may have named its base otherwise (`/tmp/`, a
 * link). Unknown (no /proc) counts as bound. */
static bool socket_bound(const char *name)
{
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return true;
	char tail[NAME_MAX + 8];
	snprintf(tail, sizeof(tail), "/%s/sock", name);
	size_t len = strlen(tail);
	bool bound = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while (!bound && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		bound = (size_t)n >= len && strcmp(line + n - len, tail) == 0;
	}
	free(line);
	fclose(f);
	return bound;
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
	    holds_only_a_socket(dfd) && !socket_bound(name)) {
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

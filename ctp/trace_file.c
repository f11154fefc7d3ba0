#define _GNU_SOURCE
#include "ctp/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACE_FILE_MODE 0600

/* Says "PATH: WHAT" (WHAT NULL: the system's words for `err`) and fails with `err`. */
static int failed(char *why, size_t why_size, int err, const char *path, const char *what)
{
	snprintf(why, why_size, "%s: %s", path, what ? what : strerror(err));
	errno = err;
	return -1;
}

/* Moves an earlier trace out of the way: rename(2) moves the entry itself, it follows no link. */
static int keep_old(const char *path, char *why, size_t why_size)
{
	char *old = NULL;
	if (asprintf(&old, "%s.old", path) < 0)
		return failed(why, why_size, ENOMEM, path, NULL);
	if (rename(path, old) != 0) {
		int err = errno;
		char what[256];
		snprintf(what, sizeof(what), "cannot keep the earlier trace as %s: %s", old,
			 strerror(err));
		free(old);
		return failed(why, why_size, err, path, what);
	}
	free(old);
	return 0;
}

int ctp_trace_file_create(const char *path, char *why, size_t why_size)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return failed(why, why_size, ELOOP, path,
				      "is a symbolic link; refusing to write a trace through it");
		if (!S_ISREG(st.st_mode)) {
			int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return failed(why, why_size, errno, path, NULL);
			return fd;
		}
		if (keep_old(path, why, why_size) < 0)
			return -1;
	} else if (errno != ENOENT) {
		return failed(why, why_size, errno, path, NULL);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, TRACE_FILE_MODE);
	if (fd < 0 && errno == EEXIST)
		return failed(why, why_size, EEXIST, path,
			      "appeared while the trace was being created; not overwritten");
	if (fd < 0)
		return failed(why, why_size, errno, path, NULL);
	return fd;
}

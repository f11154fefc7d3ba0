/* What the image an exec starts will make of the preload (exec_target.h): the file the exec names
 * is found as the exec finds it, then read by ctp_exec_image (ctp/exec_image.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/exec_target.h"

/* Whether this process may execute path, by its effective ids as exec does (faccessat2;
 * faccessat, by the real ids, where the kernel has none). */
static bool executable(const char *path)
{
	long rc = syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS);
	if (rc != 0 && errno == ENOSYS)
		rc = syscall(SYS_faccessat, AT_FDCWD, path, X_OK);
	return rc == 0;
}

/* The image of the first executable regular file named `file` in PATH, as execvp finds it (PATH
 * unset: glibc's default; an empty entry: the working directory). When none is found, the exec
 * fails, or finds what this search did not: taken as one that loads the preload; so is a
 * candidate too long for the search's small buffer (the hooks may run on a coroutine's stack of
 * a few KiB). */
enum { CANDIDATE_BYTES = 512 };
static enum ctp_exec_image search_image(const char *file)
{
	const char *dirs = getenv("PATH");
	if (!dirs)
		dirs = "/bin:/usr/bin";
	size_t file_len = strlen(file);
	char candidate[CANDIDATE_BYTES];
	for (const char *d = dirs;; d++) {
		const char *end = strchrnul(d, ':');
		size_t len = (size_t)(end - d);
		if (len + 1 + file_len >= sizeof(candidate))
			return CTP_EXEC_IMAGE_LOADS_PRELOAD;
		memcpy(candidate, d, len);
		size_t at = len;
		if (len)
			candidate[at++] = '/';
		memcpy(candidate + at, file, file_len + 1);
		struct stat st;
		if (executable(candidate) &&
		    syscall(SYS_newfstatat, AT_FDCWD, candidate, &st, 0) == 0 &&
		    S_ISREG(st.st_mode))
			return ctp_exec_image(AT_FDCWD, candidate, 0, NULL);
		if (*end == 0)
			return CTP_EXEC_IMAGE_LOADS_PRELOAD;
		d = end;
	}
}

enum ctp_exec_image ctp_exec_target_image(const struct ctp_exec_target *t)
{
	int saved = errno;
	enum ctp_exec_image image = t->search && !strchr(t->path, '/')
					    ? search_image(t->path)
					    : ctp_exec_image(t->dirfd, t->path, t->at_flags, NULL);
	errno = saved;
	return image;
}

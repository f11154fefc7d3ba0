#define _GNU_SOURCE
#include "cat/html/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void outfile_clear(struct ctp_cat_outfile *o)
{
	free(o->target);
	free(o->tmp);
	o->f = NULL;
	o->target = o->tmp = NULL;
}

/* The mode the new file gets: the replaced file's, or what open(2) would give a new one. */
static mode_t new_file_mode(const struct stat *old, bool exists)
{
	if (exists)
		return old->st_mode & 07777;
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* Writes in place into a target that is not a regular file. */
static int open_in_place(struct ctp_cat_outfile *o, const char *path)
{
	o->f = fopen(path, "w");
	if (!o->f)
		return -1;
	o->target = strdup(path);
	if (!o->target) {
		fclose(o->f);
		o->f = NULL;
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int ctp_cat_outfile_open(struct ctp_cat_outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return -1;
	if (exists && !S_ISREG(st.st_mode))
		return open_in_place(o, path);
	/* Through a symbolic link, the file it names is replaced, not the link. */
	struct stat lst;
	bool is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
	o->target = is_link ? realpath(path, NULL) : strdup(path);
	if (!o->target)
		return -1; /* (a link to nowhere: ENOENT) */
	char *dir_copy = strdup(o->target), *base_copy = strdup(o->target);
	if (!dir_copy || !base_copy ||
	    asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy)) < 0) {
		o->tmp = NULL;
		free(dir_copy);
		free(base_copy);
		outfile_clear(o);
		errno = ENOMEM;
		return -1;
	}
	free(dir_copy);
	free(base_copy);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, new_file_mode(&st, exists)) != 0 || !(o->f = fdopen(fd, "w"))) {
		int saved = errno;
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		outfile_clear(o);
		errno = saved;
		return -1;
	}
	return 0;
}

int ctp_cat_outfile_commit(struct ctp_cat_outfile *o)
{
	if (!o->f)
		return 0;
	int rc = fclose(o->f);
	o->f = NULL;
	if (rc == 0 && o->tmp)
		rc = rename(o->tmp, o->target);
	int saved = errno;
	if (rc != 0 && o->tmp)
		unlink(o->tmp);
	outfile_clear(o);
	errno = saved;
	return rc == 0 ? 0 : -1;
}

void ctp_cat_outfile_abandon(struct ctp_cat_outfile *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	outfile_clear(o);
}

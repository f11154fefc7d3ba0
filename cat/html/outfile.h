/* A file ctp-cat writes (--html PAGE), made so that nothing already at its path is lost when
 * the run fails: the content goes to a temporary file beside the target, which replaces the
 * target only once it is whole. A target that is not a regular file (a device such as
 * /dev/stdout, a FIFO) is written in place and never removed. */
#ifndef CTP_CAT_OUTFILE_H
#define CTP_CAT_OUTFILE_H

#include <stdio.h>

struct ctp_cat_outfile {
	FILE *f;      /* where to write */
	char *target; /* the file to replace: the path, or the file its symbolic link names */
	char *tmp;    /* the temporary file, NULL when writing in place */
};

/* Opens the output for `path`. Returns 0, or -1 with errno set (nothing was created). */
int ctp_cat_outfile_open(struct ctp_cat_outfile *o, const char *path);

/* Closes the output and puts it in place. Returns 0, or -1 with errno set: then the
 * temporary file is gone and the target is as it was. */
int ctp_cat_outfile_commit(struct ctp_cat_outfile *o);

/* Closes the output and drops what was written; the target stays as it was. Does nothing for an
 * output already committed or abandoned. */
void ctp_cat_outfile_abandon(struct ctp_cat_outfile *o);

#endif

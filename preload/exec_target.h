/* What an exec is about to run, and what that image will make of the preload (exec_target.c): a
 * connection is handed over to it only when it loads the preload, never left to a program that
 * cannot take it; and an image whose loader cannot take the preload does not find it in
 * LD_PRELOAD. */
#ifndef CTP_PRELOAD_EXEC_TARGET_H
#define CTP_PRELOAD_EXEC_TARGET_H

#include <fcntl.h>
#include <stdbool.h>

#include "ctp/exec_image.h"
#include "preload/compiler.h"

/* The file as the exec call names it: `path` under `dirfd` (AT_FDCWD, or execveat's) with
 * execveat's `at_flags`; or, with `search`, a file name that PATH resolves as execvp does. */
struct ctp_exec_target {
	int dirfd;
	const char *path;
	int at_flags;
	bool search;
};

#define CTP_EXEC_PATH(p) ((struct ctp_exec_target){.dirfd = AT_FDCWD, .path = (p)})
#define CTP_EXEC_SEARCH(p)                                                                         \
	((struct ctp_exec_target){.dirfd = AT_FDCWD, .path = (p), .search = true})
#define CTP_EXEC_FD(fd)                                                                            \
	((struct ctp_exec_target){.dirfd = (fd), .path = "", .at_flags = AT_EMPTY_PATH})
#define CTP_EXEC_AT(fd, p, flags)                                                                  \
	((struct ctp_exec_target){.dirfd = (fd), .path = (p), .at_flags = (flags)})

/* What the new image will make of the preload (ctp/exec_image.h). Only system calls and its own
 * stack: a vfork child may ask. */
CTP_HIDDEN enum ctp_exec_image ctp_exec_target_image(const struct ctp_exec_target *t);

#endif

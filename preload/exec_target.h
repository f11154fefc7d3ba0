/* What an exec is about to run, and whether that image will load the preload (exec_target.c):
 * a connection is handed over to it only then, never left to a program that cannot take it. */
#ifndef CTP_PRELOAD_EXEC_TARGET_H
#define CTP_PRELOAD_EXEC_TARGET_H

#include <fcntl.h>
#include <stdbool.h>

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

/* Whether the new image will load the preload: a regular file, not run in secure-execution mode
 * (no set-ID bit to another user or group, real and effective ids equal, no file capabilities to
 * gain), that is a dynamically linked program of the preload's own ELF class and machine, or a
 * script whose interpreter is one, or that it cannot read (taken as yes). Only system calls and
 * its own stack: a vfork child may ask. */
CTP_HIDDEN bool ctp_exec_target_traceable(const struct ctp_exec_target *t);

#endif

/* Where a run directory, the home of the collector's socket, is made: under XDG_RUNTIME_DIR,
 * TMPDIR or /tmp, the first that works. For root, the ones that every user may search come
 * first: a traced server that starts as root and changes its user must still reach the socket,
 * and the grant its preload makes covers the run directory, not what lies above it
 * (preload/user_change_hooks.c); a root login's XDG_RUNTIME_DIR (/run/user/0) and a TMPDIR of
 * pam_tmpdir's are private. Shared by ctp-run and the preload's own collector start. */
#ifndef CTP_RUN_DIR_BASE_H
#define CTP_RUN_DIR_BASE_H

#include <stddef.h>

enum { CTP_RUN_DIR_BASES = 3 };

/* The candidate directories in the order to try: absolute paths only. Returns how many. */
size_t ctp_run_dir_bases(const char *bases[CTP_RUN_DIR_BASES]);

#endif

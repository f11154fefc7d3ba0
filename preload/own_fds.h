/* The preload's own fds (own_fds.c): kept out of the program's way and safe from its close,
 * close_range, dup2 and dup3. */
#ifndef CTP_PRELOAD_OWN_FDS_H
#define CTP_PRELOAD_OWN_FDS_H

#include <stdbool.h>
#include <stdint.h>

#include "preload/compiler.h"

/* The identity of the file fd names (device and inode), by a raw fstat; false when fd is not
 * open. */
CTP_HIDDEN bool ctp_fd_identity(int fd, uint64_t *dev, uint64_t *ino);
/* Registers the variable holding one of the preload's fds, or notes that it holds a new file. */
CTP_HIDDEN void ctp_own_fd_register(int *slot);
/* Whether fd is one of ours (checked by the file's identity, not the number alone). */
CTP_HIDDEN bool ctp_own_fd(int fd);
/* Whether the fd in a registered slot is still ours; sets the slot to -1 when it is not (but
 * not in a vfork child, which shares its parent's slots). */
CTP_HIDDEN bool ctp_own_fd_valid(int *slot);
/* Closes the fd in a registered slot if it is still ours (never a file of the program's that
 * took its number), and sets the slot to -1. */
CTP_HIDDEN void ctp_own_fd_close(int *slot);
/* Moves a new fd of the preload's to the top of the range the program may use (below
 * RLIMIT_NOFILE's soft limit, and below 4096), close-on-exec. */
CTP_HIDDEN int ctp_own_fd_move_high(int fd);
/* A copy of fd there, open across an exec (not close-on-exec): for what an exec passes on (the
 * collector's ready pipe, a connection handed over). -1 when no number is free. */
CTP_HIDDEN int ctp_own_fd_dup_high_inherited(int fd);
/* Before a dup2/dup3 onto `target`: if it is one of ours, ours moves elsewhere first. */
CTP_HIDDEN void ctp_own_fd_make_room(int target);
/* close_range(first, last, flags) over everything in the range but the preload's own fds. */
CTP_HIDDEN int ctp_own_fd_close_range(unsigned first, unsigned last, int flags,
				      int (*real_close_range)(unsigned, unsigned, int));

#endif

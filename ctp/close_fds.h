/* Closing what a child must not pass on to the collector it execs: every fd of the program's or
 * the launcher's but the one it is handed (close_fds.c). Shared by ctp-run and the preload's own
 * collector start; system calls only, for the preload's raw-forked child. */
#ifndef CTP_CLOSE_FDS_H
#define CTP_CLOSE_FDS_H

/* Closes every fd from `first` on but `kept` (which may lie below `first`: then all from `first`
 * on): close_range where the kernel has it (Linux 5.9; an fd may lie at any number below the
 * limit), else each number below 4096. */
void ctp_close_fds_but(int first, int kept);

#endif

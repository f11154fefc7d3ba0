/* Closing every fd but one (close_fds.h). */
#define _GNU_SOURCE
#include "ctp/close_fds.h"

#include <sys/syscall.h>
#include <unistd.h>

void ctp_close_fds_but(int first, int kept)
{
	unsigned after = kept >= first ? (unsigned)kept + 1 : (unsigned)first;
	if (syscall(SYS_close_range, after, ~0U, 0) != 0) { /* before Linux 5.9 */
		for (int fd = first; fd < 4096; fd++)
			if (fd != kept)
				syscall(SYS_close, fd);
		return;
	}
	if (kept > first)
		syscall(SYS_close_range, (unsigned)first, (unsigned)kept - 1, 0);
}

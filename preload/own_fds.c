/* The preload's own file descriptors (the collector socket, the segment memfd) must outlive a
 * program that closes every fd it did not open (daemons, close_range, loops of close) or dup2s
 * over one. The I/O hooks ask here: a close of one of ours is answered with success and not
 * done, a close_range skips ours, and a dup2 onto one of ours first moves ours away. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

enum { OWN_FD_FLOOR = 900 };

/* Each registered slot holds the address of the variable that keeps the fd, so that moving an
 * fd updates its user. */
static int *own_slots[4];
static int own_count;

void ctp_own_fd_register(int *slot)
{
	if (own_count < (int)(sizeof(own_slots) / sizeof(own_slots[0])))
		own_slots[own_count++] = slot;
}

bool ctp_own_fd(int fd)
{
	if (fd < 0)
		return false;
	for (int i = 0; i < own_count; i++)
		if (__atomic_load_n(own_slots[i], __ATOMIC_RELAXED) == fd)
			return true;
	return false;
}

int ctp_own_fd_move_high(int fd)
{
	int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, OWN_FD_FLOOR);
	if (high < 0)
		return fd;
	syscall(SYS_close, fd);
	return high;
}

void ctp_own_fd_make_room(int target)
{
	for (int i = 0; i < own_count; i++) {
		int fd = __atomic_load_n(own_slots[i], __ATOMIC_RELAXED);
		if (fd != target)
			continue;
		int moved = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, target + 1);
		if (moved >= 0)
			__atomic_store_n(own_slots[i], moved, __ATOMIC_RELAXED);
		/* The program's dup2 now closes the old number; ours lives on at `moved`. */
	}
}

int ctp_own_fd_close_range(unsigned first, unsigned last, int flags,
			   int (*real_close_range)(unsigned, unsigned, int))
{
	unsigned from = first;
	int rc = 0;
	for (;;) {
		/* The lowest of our fds inside [from, last], if any. */
		unsigned next = last;
		bool found = false;
		for (int i = 0; i < own_count; i++) {
			int fd = __atomic_load_n(own_slots[i], __ATOMIC_RELAXED);
			if (fd >= 0 && (unsigned)fd >= from && (unsigned)fd <= last &&
			    (!found || (unsigned)fd < next)) {
				next = (unsigned)fd;
				found = true;
			}
		}
		if (!found)
			return rc | real_close_range(from, last, flags);
		if (next > from)
			rc |= real_close_range(from, next - 1, flags);
		if (next == last)
			return rc;
		from = next + 1;
	}
}

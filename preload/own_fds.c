/* The preload's own file descriptors (the collector socket, the segment memfd) must outlive a
 * program that closes every fd it did not open (daemons, close_range, closefrom, loops of close)
 * or dup2s over one. The I/O hooks ask here: a close of one of ours is answered with success and
 * not done, a close_range or closefrom skips ours, and a dup2 onto one of ours first moves ours
 * away.
 *
 * What no hook sees (a raw close_range syscall, a close inside libc) can still close one of ours,
 * and the program may then get the same number for a file of its own. So a number alone proves
 * nothing: each fd of ours is known by the identity of its file (device and inode), checked
 * before the preload uses it and before a close is refused. One whose identity changed is the
 * program's now; the preload forgets it and never touches that number again. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/own_fds.h"
#include "preload/process.h"
#include "preload/threads.h"

/* Own fds live at the top of the range the program may use (below RLIMIT_NOFILE's soft limit,
 * and below 4096 whatever the limit: an fd number that high makes the kernel's fd table that
 * large). Programs take the lowest free numbers; a program that picks a number of its own
 * (dup2, F_DUPFD) picks it low more often than high, and a dup2 onto one of ours moves ours. */
enum { OWN_FD_CEILING = 4096, OWN_FD_SPAN = 8, MAX_OWN_FDS = 8 };

/* Each registered slot holds the address of the variable that keeps the fd, so that moving an
 * fd updates its user, and the identity of the file it had when it was made ours. */
struct own_fd {
	int *slot;
	uint64_t dev, ino;
};
static struct own_fd own[MAX_OWN_FDS];
static int own_count;

bool ctp_fd_identity(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (fd < 0 || syscall(SYS_fstat, fd, &st) != 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

static struct own_fd *find_slot(int *slot)
{
	for (int i = 0; i < own_count; i++)
		if (own[i].slot == slot)
			return &own[i];
	return NULL;
}

void ctp_own_fd_register(int *slot)
{
	struct own_fd *o = find_slot(slot);
	if (!o && own_count < MAX_OWN_FDS) {
		o = &own[own_count];
		o->slot = slot;
		__atomic_store_n(&own_count, own_count + 1, __ATOMIC_RELEASE);
	}
	if (o && !ctp_fd_identity(*slot, &o->dev, &o->ino))
		o->dev = o->ino = 0;
}

/* Whether o's fd still names the file it was made for; forgets it when not, except in a vfork
 * child: its fd table is its own, but its memory is its parent's, whose fd is still ours. */
static bool still_ours(struct own_fd *o, int fd)
{
	uint64_t dev, ino;
	if (ctp_fd_identity(fd, &dev, &ino) && dev == o->dev && ino == o->ino)
		return true;
	if (ctp_in_vfork_child())
		return false;
	int expected = fd;
	if (__atomic_compare_exchange_n(o->slot, &expected, -1, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		ctp_log("the program closed one of the tracer's fds", NULL, NULL);
	return false;
}

bool ctp_own_fd_valid(int *slot)
{
	struct own_fd *o = find_slot(slot);
	int fd = __atomic_load_n(slot, __ATOMIC_RELAXED);
	return o && fd >= 0 && still_ours(o, fd);
}

void ctp_own_fd_close(int *slot)
{
	if (ctp_own_fd_valid(slot))
		syscall(SYS_close, *slot);
	__atomic_store_n(slot, -1, __ATOMIC_RELAXED);
}

bool ctp_own_fd(int fd)
{
	/* A vfork child's copies are spared too: all are close-on-exec, and the exec hooks may
	 * still need the connection (ctp_connection_for_exec) after the child closed every fd
	 * it does not pass on, as Python's subprocess does. */
	if (fd < 0)
		return false;
	for (int i = 0; i < own_count; i++)
		if (__atomic_load_n(own[i].slot, __ATOMIC_RELAXED) == fd)
			return still_ours(&own[i], fd);
	return false;
}

/* A free number as high as allowed, for a copy of fd (F_DUPFD_CLOEXEC or F_DUPFD); -1 when
 * none. */
static int dup_high(int fd, int dup_command)
{
	struct rlimit rl;
	long limit = OWN_FD_CEILING;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)OWN_FD_CEILING)
		limit = (long)rl.rlim_cur;
	for (long from = limit - OWN_FD_SPAN; from > 2; from -= OWN_FD_SPAN) {
		long high = syscall(SYS_fcntl, fd, dup_command, from);
		if (high >= 0)
			return (int)high;
		if (errno != EMFILE && errno != EINVAL)
			return -1;
	}
	return -1;
}

int ctp_own_fd_move_high(int fd)
{
	int saved_errno = errno;
	int high = dup_high(fd, F_DUPFD_CLOEXEC);
	if (high >= 0)
		syscall(SYS_close, fd);
	errno = saved_errno;
	return high >= 0 ? high : fd;
}

int ctp_own_fd_dup_high_inherited(int fd)
{
	int saved_errno = errno;
	int high = dup_high(fd, F_DUPFD);
	errno = saved_errno;
	return high;
}

void ctp_own_fd_make_room(int target)
{
	if (target < 0 || ctp_in_vfork_child())
		return;
	for (int i = 0; i < own_count; i++) {
		int fd = __atomic_load_n(own[i].slot, __ATOMIC_RELAXED);
		if (fd != target || !still_ours(&own[i], fd))
			continue;
		int moved = dup_high(fd, F_DUPFD_CLOEXEC);
		if (moved >= 0)
			__atomic_store_n(own[i].slot, moved, __ATOMIC_RELAXED);
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
		for (int i = 0; i < own_count; i++) { /* spared in a vfork child too: ctp_own_fd */
			int fd = __atomic_load_n(own[i].slot, __ATOMIC_RELAXED);
			if (fd >= 0 && (unsigned)fd >= from && (unsigned)fd <= last &&
			    (!found || (unsigned)fd < next) && still_ours(&own[i], fd)) {
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

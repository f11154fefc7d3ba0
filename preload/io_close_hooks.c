/* Everything that closes an fd: close, close_range, and dup2/dup3, which close their target
 * silently. The preload's own fds are kept alive (own_fds.c). For an fd the tracer knows of, a
 * CLOSE record names the closer (with its stack) and the coroutine that waited on the fd, whose
 * station is marked so that its final state says the fd was closed under it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <unistd.h>

#include "preload/compiler.h"
#include "preload/fd_table.h"
#include "preload/io_record.h"
#include "preload/own_fds.h"
#include "preload/real.h"
#include "preload/unwind.h"

CTP_EXPORT int close(int fd)
{
	CTP_REAL(close);
	if (CTP_UNLIKELY(ctp_own_fd(fd)) && !ctp_called_from_unwinder(__builtin_return_address(0)))
		return 0; /* ours, not the program's: it is "closed" as far as it can tell */
	struct ctp_fd_closing c;
	if (__builtin_expect(!ctp_io_close_begin(fd, &c), 1))
		return real_close(fd);
	int rc = real_close(fd);
	/* Linux frees the fd even when close reports EINTR or EIO. */
	if (rc == 0 || errno != EBADF)
		ctp_io_close_end(fd, &c, CTP_IO_CALLER());
	return rc;
}

/* close_range over everything but the preload's own fds, with a CLOSE record for each fd the
 * tracer knew something of. */
static int close_range_sparing_ours(unsigned first, unsigned last, int flags,
				    int (*real_close_range)(unsigned, unsigned, int))
{
	int rc = ctp_own_fd_close_range(first, last, flags, real_close_range);
	if (rc != 0 || (flags & CLOSE_RANGE_CLOEXEC))
		return rc;
	/* Only the fds the table knows of, up to its high-water mark: the range is often
	 * [3, ~0U]. */
	uint32_t high = __atomic_load_n(&ctp_fd_table.high, __ATOMIC_RELAXED);
	for (uint64_t fd = first; fd <= last && fd < high; fd++) {
		struct ctp_fd_closing c;
		if (ctp_io_close_begin((int)fd, &c) && !ctp_own_fd((int)fd))
			ctp_io_close_end((int)fd, &c, 0, 0);
	}
	return rc;
}

CTP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	CTP_REAL(close_range);
	return close_range_sparing_ours(first, last, flags, real_close_range);
}

/* glibc's closefrom makes the close_range syscall itself, which no hook would see: the preload's
 * fds would be gone. The same close_range, sparing ours; glibc's own fallback where the kernel
 * has none (it fails the program the same way if that fails too). */
CTP_EXPORT void closefrom(int lowfd)
{
	CTP_REAL(close_range);
	CTP_REAL(closefrom);
	int saved_errno = errno;
	unsigned first = lowfd < 0 ? 0 : (unsigned)lowfd;
	if (real_close_range && close_range_sparing_ours(first, ~0U, 0, real_close_range) == 0) {
		errno = saved_errno;
		return;
	}
	errno = saved_errno;
	real_closefrom(lowfd);
}

CTP_EXPORT int dup2(int oldfd, int newfd)
{
	CTP_REAL(dup2);
	if (oldfd == newfd)
		return real_dup2(oldfd, newfd);
	ctp_own_fd_make_room(newfd);
	struct ctp_fd_closing c;
	if (__builtin_expect(!ctp_io_close_begin(newfd, &c), 1))
		return real_dup2(oldfd, newfd);
	int rc = real_dup2(oldfd, newfd);
	if (rc >= 0)
		ctp_io_close_end(newfd, &c, CTP_IO_CALLER());
	return rc;
}

CTP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	CTP_REAL(dup3);
	if (oldfd == newfd)
		return real_dup3(oldfd, newfd, flags); /* EINVAL */
	ctp_own_fd_make_room(newfd);
	struct ctp_fd_closing c;
	if (__builtin_expect(!ctp_io_close_begin(newfd, &c), 1))
		return real_dup3(oldfd, newfd, flags);
	int rc = real_dup3(oldfd, newfd, flags);
	if (rc >= 0)
		ctp_io_close_end(newfd, &c, CTP_IO_CALLER());
	return rc;
}

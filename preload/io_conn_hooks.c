/* Accepting and connecting. A listening socket's EAGAIN makes the caller an accept waiter; a
 * non-blocking connect that is under way (EINPROGRESS) makes it a connect waiter. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/fd_table.h"
#include "preload/io_record.h"
#include "preload/real.h"

/* A new fd: whatever the table holds for its number is from an fd closed where no hook saw it
 * (inside libc, or by a raw syscall). */
static inline void fresh_fd(int fd)
{
	struct ctp_fd_slot *s = ctp_fd_slot(fd);
	if (CTP_UNLIKELY(s && (__atomic_load_n(&s->station, __ATOMIC_RELAXED) ||
			       __atomic_load_n(&s->watch, __ATOMIC_RELAXED))))
		ctp_fd_slot_reset(s);
}

CTP_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
	CTP_REAL(accept);
	int rc = real_accept(fd, addr, addrlen);
	ctp_io_after(fd, rc, CTP_OP_ACCEPT);
	if (rc >= 0)
		fresh_fd(rc);
	return rc;
}

CTP_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
	CTP_REAL(accept4);
	int rc = real_accept4(fd, addr, addrlen, flags);
	ctp_io_after(fd, rc, CTP_OP_ACCEPT);
	if (rc >= 0)
		fresh_fd(rc);
	return rc;
}

CTP_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
	CTP_REAL(connect);
	int rc = real_connect(fd, addr, addrlen);
	if (CTP_UNLIKELY(rc < 0 && errno == EINPROGRESS))
		ctp_io_would_block(fd, CTP_OP_CONNECT, CTP_IO_CALLER());
	else
		ctp_io_after(fd, rc, CTP_OP_CONNECT);
	return rc;
}

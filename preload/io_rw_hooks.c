/* Reads and writes: each hook calls the real function, then ctp_io_after, which costs two loads
 * unless the call would have blocked (the calling coroutine then waits on the fd) or the fd has
 * a waiter (a success of that waiter ends its wait). The fortified variants that
 * -D_FORTIFY_SOURCE programs call instead are hooked too; they keep their checks. */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/io_record.h"
#include "preload/real.h"

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
		       socklen_t *addrlen);

/* Defines hook `name` with parameters `params`: the real call with `args`, then the check. */
#define RW_HOOK(name, op, params, args)                                                            \
	CTP_EXPORT ssize_t name params                                                             \
	{                                                                                          \
		CTP_REAL(name);                                                                    \
		ssize_t rc = real_##name args;                                                     \
		ctp_io_after(fd, rc, op);                                                          \
		return rc;                                                                         \
	}

RW_HOOK(read, CTP_OP_READ, (int fd, void *buf, size_t n), (fd, buf, n))

RW_HOOK(__read_chk, CTP_OP_READ, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen))

RW_HOOK(readv, CTP_OP_READ, (int fd, const struct iovec *iov, int iovcnt), (fd, iov, iovcnt))

RW_HOOK(recv, CTP_OP_READ, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))

RW_HOOK(__recv_chk, CTP_OP_READ, (int fd, void *buf, size_t n, size_t buflen, int flags),
	(fd, buf, n, buflen, flags))

RW_HOOK(recvfrom, CTP_OP_READ,
	(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *addrlen),
	(fd, buf, n, flags, addr, addrlen))

RW_HOOK(__recvfrom_chk, CTP_OP_READ,
	(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
	 socklen_t *addrlen),
	(fd, buf, n, buflen, flags, addr, addrlen))

RW_HOOK(recvmsg, CTP_OP_READ, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))

RW_HOOK(write, CTP_OP_WRITE, (int fd, const void *buf, size_t n), (fd, buf, n))

RW_HOOK(writev, CTP_OP_WRITE, (int fd, const struct iovec *iov, int iovcnt), (fd, iov, iovcnt))

RW_HOOK(send, CTP_OP_WRITE, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))

RW_HOOK(sendto, CTP_OP_WRITE,
	(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
	 socklen_t addrlen),
	(fd, buf, n, flags, addr, addrlen))

RW_HOOK(sendmsg, CTP_OP_WRITE, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))

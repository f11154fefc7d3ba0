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

CTP_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	CTP_REAL(read);
	ssize_t rc = real_read(fd, buf, n);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	CTP_REAL(__read_chk);
	ssize_t rc = real___read_chk(fd, buf, n, buflen);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	CTP_REAL(readv);
	ssize_t rc = real_readv(fd, iov, iovcnt);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	CTP_REAL(recv);
	ssize_t rc = real_recv(fd, buf, n, flags);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	CTP_REAL(__recv_chk);
	ssize_t rc = real___recv_chk(fd, buf, n, buflen, flags);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
			    socklen_t *addrlen)
{
	CTP_REAL(recvfrom);
	ssize_t rc = real_recvfrom(fd, buf, n, flags, addr, addrlen);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
				  struct sockaddr *addr, socklen_t *addrlen)
{
	CTP_REAL(__recvfrom_chk);
	ssize_t rc = real___recvfrom_chk(fd, buf, n, buflen, flags, addr, addrlen);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	CTP_REAL(recvmsg);
	ssize_t rc = real_recvmsg(fd, msg, flags);
	ctp_io_after(fd, rc, CTP_OP_READ);
	return rc;
}

CTP_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	CTP_REAL(write);
	ssize_t rc = real_write(fd, buf, n);
	ctp_io_after(fd, rc, CTP_OP_WRITE);
	return rc;
}

CTP_EXPORT ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	CTP_REAL(writev);
	ssize_t rc = real_writev(fd, iov, iovcnt);
	ctp_io_after(fd, rc, CTP_OP_WRITE);
	return rc;
}

CTP_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	CTP_REAL(send);
	ssize_t rc = real_send(fd, buf, n, flags);
	ctp_io_after(fd, rc, CTP_OP_WRITE);
	return rc;
}

CTP_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
			  socklen_t addrlen)
{
	CTP_REAL(sendto);
	ssize_t rc = real_sendto(fd, buf, n, flags, addr, addrlen);
	ctp_io_after(fd, rc, CTP_OP_WRITE);
	return rc;
}

CTP_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	CTP_REAL(sendmsg);
	ssize_t rc = real_sendmsg(fd, msg, flags);
	ctp_io_after(fd, rc, CTP_OP_WRITE);
	return rc;
}

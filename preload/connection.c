/* The connection to the collector: a hello that hands over the segment's memfd, and the rare
 * wakeup byte. Raw syscalls throughout, so that none of the preload's own I/O hooks (and no
 * stdio) is involved. The socket is moved to a high fd and closed on exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctp/wire.h"
#include "preload.h"

static int sock = -1;

/* Appends the contents of /proc/self/<name> (NUL-separated strings) at buf[*len]. Returns the
 * number of strings appended. */
static uint32_t append_proc_strings(const char *path, char *buf, uint32_t *len, uint32_t cap)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint32_t start = *len;
	ssize_t n;
	while (*len < cap && (n = syscall(SYS_read, fd, buf + *len, cap - *len)) > 0)
		*len += (uint32_t)n;
	syscall(SYS_close, fd);
	if (*len == cap) /* cut: end on a whole string */
		buf[cap - 1] = 0;
	uint32_t strings = 0;
	for (uint32_t i = start; i < *len; i++)
		strings += buf[i] == 0;
	return strings;
}

static bool send_hello(void)
{
	static char msg[CTP_WIRE_MAX];
	struct ctp_msg_hello *h = (struct ctp_msg_hello *)msg;
	uint32_t cap = CTP_WIRE_MAX - sizeof(*h);
	uint32_t len = 0;
	ssize_t n = syscall(SYS_readlink, "/proc/self/exe", h->strings, cap - 1);
	len = n > 0 ? (uint32_t)n : 0;
	h->strings[len++] = 0;
	h->h.magic = CTP_WIRE_MAGIC;
	h->h.type = CTP_MSG_HELLO;
	h->pid = (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	h->argc = append_proc_strings("/proc/self/cmdline", h->strings, &len, cap);
	h->strings_len = len;

	struct iovec iov = {.iov_base = msg, .iov_len = sizeof(*h) + len};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = control.buf,
			    .msg_controllen = sizeof(control.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ctp_seg.memfd, sizeof(int));
	return syscall(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len;
}

bool ctp_connection_open(void)
{
	const char *path = ctp_proc.config.socket_path;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		ctp_log("CTP_SOCKET is too long: ", path, NULL);
		return false;
	}
	strcpy(addr.sun_path, path);
	if (sock >= 0)
		syscall(SYS_close, sock); /* after fork: the parent's connection is the parent's */
	sock = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || syscall(SYS_connect, sock, &addr, sizeof(addr)) != 0) {
		ctp_log("cannot reach the collector at ", path, ": running untraced");
		if (sock >= 0)
			syscall(SYS_close, sock);
		sock = -1;
		return false;
	}
	sock = ctp_own_fd_move_high(sock);
	static bool registered;
	if (!registered)
		ctp_own_fd_register(&sock);
	registered = true;
	if (!send_hello()) {
		ctp_log("the collector did not take the segment: running untraced", NULL, NULL);
		return false;
	}
	return true;
}

void ctp_connection_wake(void)
{
	int saved = errno;
	char b = CTP_WAKE_BYTE;
	long rc = syscall(SYS_sendto, __atomic_load_n(&sock, __ATOMIC_RELAXED), &b, 1,
			  MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
	if (rc < 0 && errno != EAGAIN && errno != EINTR)
		ctp_process_stop("the collector is gone");
	errno = saved;
}

void ctp_connection_send_exec(void)
{
	struct ctp_msg_header h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_EXEC};
	int saved = errno;
	syscall(SYS_sendto, sock, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
	errno = saved;
}

/* The connection to the collector: a hello that hands over the segment's memfd, the rare
 * wakeup byte, and the notices. The first process connects by the socket's path; a fork child
 * through its parent's connection, and a new image that could not reach the path through one
 * handed across its exec (ctp/CTP.md "Connection"). Raw syscalls throughout, so that none of
 * the preload's own I/O hooks (and no stdio) is involved. The socket is moved to a high fd and
 * closed on exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctp/wire.h"
#include "preload/connection.h"
#include "preload/own_fds.h"
#include "preload/process.h"
#include "preload/segment.h"
#include "preload/threads.h"

static int sock = -1;
/* The connection was passed to the collector over another (a fork child's over its parent's, an
 * image's over the one it replaced), not made by the socket's path (ctp_connection_for_exec). */
static bool connection_passed;

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

/* Appends the strings of the NULL-terminated list v at buf[*len], each whole or none. Returns
 * the number appended. */
static uint32_t append_strings(char *const *v, char *buf, uint32_t *len, uint32_t cap)
{
	uint32_t strings = 0;
	for (; v && *v; v++) {
		size_t n = strlen(*v) + 1;
		if (n > cap - *len)
			break;
		memcpy(buf + *len, *v, n);
		*len += (uint32_t)n;
		strings++;
	}
	return strings;
}

static bool wait_writable(int fd, long *budget_ms);

/* Sends msg (len bytes) on socket s with fd as SCM_RIGHTS, waiting for room for at most
 * *budget_ms. */
static bool send_with_fd(int s, const void *msg, size_t len, int fd, long *budget_ms)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
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
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	for (;;) {
		long n = syscall(SYS_sendmsg, s, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)len)
			return true;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR) || !wait_writable(s, budget_ms))
			return false;
	}
}

static bool send_hello(long *budget_ms)
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
	h->ppid = ctp_proc.forked_from ? ctp_proc.forked_from : (uint32_t)getppid();
	h->flags = ctp_proc.forked_from ? CTP_HELLO_FORKED : 0;
	h->argc = append_proc_strings("/proc/self/cmdline", h->strings, &len, cap);
	if (h->argc == 0) /* no fd left to read it with, say: the arguments the loader passed */
		h->argc = append_strings(ctp_proc.argv, h->strings, &len, cap);
	h->strings_len = len;
	return send_with_fd(sock, msg, sizeof(*h) + len, ctp_seg.memfd, budget_ms);
}

/* How long a new process waits for a collector that does not take its connection: it then runs
 * untraced rather than wedged (a stopped or overloaded collector must not stop the program). */
enum { CONNECT_PATIENCE_MS = 500, POLL_STEP_MS = 10 };

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	syscall(SYS_nanosleep, &ts, NULL);
}

/* Waits until socket s is writable, for at most *budget_ms (decremented). */
static bool wait_writable(int s, long *budget_ms)
{
	while (*budget_ms > 0) {
		struct pollfd p = {.fd = s, .events = POLLOUT};
		long step = *budget_ms < POLL_STEP_MS ? *budget_ms : POLL_STEP_MS;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = step * 1000000L};
		long n = syscall(SYS_ppoll, &p, 1, &ts, NULL, 8);
		*budget_ms -= step;
		if (n > 0)
			return (p.revents & POLLOUT) != 0;
	}
	return false;
}

/* Connects without blocking: a listener whose backlog is full answers EAGAIN at once, and is
 * tried again for a while. */
static bool connect_bounded(const struct sockaddr_un *addr, long *budget_ms)
{
	for (;;) {
		if (syscall(SYS_connect, sock, addr, sizeof(*addr)) == 0)
			return true;
		if (errno == EINPROGRESS)
			return wait_writable(sock, budget_ms);
		if (errno != EAGAIN || *budget_ms <= 0)
			return false;
		sleep_ms(POLL_STEP_MS);
		*budget_ms -= POLL_STEP_MS;
	}
}

static void drop_socket(void)
{
	if (sock >= 0)
		syscall(SYS_close, sock);
	sock = -1;
}

/* The collector's pid: the peer of socket s, 0 if unknown. */
static int collector_pid(int s)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);
	if (syscall(SYS_getsockopt, s, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0)
		return 0;
	return peer.pid > 0 ? peer.pid : 0;
}

/* The collector unwinds the stacks of coroutines that stay suspended by reading this process's
 * memory (process_vm_readv). Yama's ptrace_scope 1 allows that only to an ancestor or to a process
 * named with PR_SET_PTRACER: the collector is named. Only where the scope is 1: elsewhere the
 * call is needless (0) or useless (2, 3), and a program that names a ptracer of its own later
 * replaces ours (the collector then says it may not read, and the stacks come from the process
 * itself at its end). Nothing else changes: not dumpable, not the program's own ptrace rights. */
static void let_collector_read(int collector)
{
	char scope = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope",
			      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = syscall(SYS_read, fd, &scope, 1);
	syscall(SYS_close, fd);
	if (n == 1 && scope == '1' && collector > 0)
		syscall(SYS_prctl, PR_SET_PTRACER, (unsigned long)collector, 0, 0, 0);
}

/* Connects by the listening socket's path. */
static bool connect_by_path(const char *path, long *budget_ms)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path)) {
		ctp_log("CTP_SOCKET is too long: ", path, NULL);
		return false;
	}
	strcpy(addr.sun_path, path);
	sock = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sock < 0 || !connect_bounded(&addr, budget_ms)) {
		/* Why, for the user: no fd left (EMFILE), no permission, no collector... */
		char why[128];
		snprintf(why, sizeof(why), " (%s): running untraced", strerror(errno));
		ctp_log("cannot reach the collector at ", path, why);
		drop_socket();
		return false;
	}
	return true;
}

/* A fork child's connection: one end of a socket pair, the other end handed to the collector
 * over the connection inherited from the parent (CTP_MSG_CONNECT). The path may be out of the
 * child's reach (a server that dropped root since it started); the parent's connection never
 * is. Closes the inherited connection: it is the parent's. */
static bool connect_through_parent(int inherited, long *budget_ms, int *collector)
{
	int pair[2];
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		    pair) != 0) {
		syscall(SYS_close, inherited);
		return false;
	}
	struct ctp_msg_header h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_CONNECT};
	bool sent = send_with_fd(inherited, &h, sizeof(h), pair[1], budget_ms);
	*collector = collector_pid(inherited);
	syscall(SYS_close, pair[1]);
	syscall(SYS_close, inherited);
	if (!sent) {
		syscall(SYS_close, pair[0]);
		return false;
	}
	sock = pair[0];
	return true;
}

/* The connection an exec handed to this image (ctp_connection_for_exec): the fd that
 * CTP_CONNECTION_FD names ("FD:COLLECTOR_PID"), if it is the end of a socket pair made by this
 * process before its exec or by the parent that spawned it (never a socket of the program's that
 * took the number); the variable is removed, so that neither the program nor its children see
 * it. */
static int connection_from_exec(int *collector)
{
	const char *var = getenv(CTP_CONNECTION_FD_VAR);
	if (!var)
		return -1;
	char *end;
	long fd = strtol(var, &end, 10);
	long pid = *end == ':' ? strtol(end + 1, &end, 10) : -1;
	unsetenv(CTP_CONNECTION_FD_VAR);
	if (*end || fd < 0 || fd > INT32_MAX || pid < 0 || pid > INT32_MAX)
		return -1;
	int type = 0;
	socklen_t len = sizeof(type);
	struct ucred maker;
	socklen_t maker_len = sizeof(maker);
	if (syscall(SYS_getsockopt, (int)fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
	    type != SOCK_SEQPACKET ||
	    syscall(SYS_getsockopt, (int)fd, SOL_SOCKET, SO_PEERCRED, &maker, &maker_len) != 0 ||
	    (maker.pid != getpid() && maker.pid != getppid()))
		return -1;
	syscall(SYS_fcntl, (int)fd, F_SETFD, FD_CLOEXEC);
	*collector = (int)pid;
	return (int)fd;
}

void ctp_connection_discard_handover(void)
{
	int collector;
	int fd = connection_from_exec(&collector);
	if (fd >= 0)
		syscall(SYS_close, fd); /* the collector drops a connection that closes unused */
}

bool ctp_connection_open(void)
{
	int saved_errno = errno;
	bool ok = false;
	long budget = CONNECT_PATIENCE_MS;
	int collector = 0;
	/* After fork the connection is the parent's; ctp_own_fd_valid checks that the number
	 * still names it (the program may have reused the number). */
	int inherited = sock >= 0 && ctp_own_fd_valid(&sock) ? sock : -1;
	int handed = inherited < 0 ? connection_from_exec(&collector) : -1;
	sock = -1;
	if (inherited >= 0 && connect_through_parent(inherited, &budget, &collector)) {
		connection_passed = true;
	} else if (handed >= 0) {
		sock = handed;
		connection_passed = true;
	} else if (connect_by_path(ctp_proc.config.socket_path, &budget)) {
		collector = collector_pid(sock);
		connection_passed = false;
	} else {
		goto out;
	}
	sock = ctp_own_fd_move_high(sock);
	ctp_own_fd_register(&sock);
	if (!send_hello(&budget)) {
		ctp_log("the collector did not take the segment: running untraced", NULL, NULL);
		drop_socket();
		goto out;
	}
	ctp_proc.collector_pid = collector;
	let_collector_read(collector);
	ok = true;
out:
	errno = saved_errno;
	return ok;
}

void ctp_connection_wake(void)
{
	int saved = errno;
	char b = CTP_WAKE_BYTE;
	/* The wake byte must never land in a socket of the program's. */
	if (!ctp_own_fd_valid(&sock)) {
		ctp_process_stop(
			"the tracer's connection to the collector was closed by the program");
		errno = saved;
		return;
	}
	long rc = syscall(SYS_sendto, sock, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
	if (rc < 0 && errno != EAGAIN && errno != EINTR)
		ctp_process_stop("the collector is gone");
	errno = saved;
}

/* A notice the collector may act on but never answers: sent without waiting (a full socket
 * loses it; the collector then waits its grace period for processes that may come). */
static void send_notice(const void *msg, size_t len)
{
	int saved = errno;
	/* Not from a vfork child: it shares our memory and our connection, and what it does is not
	 * ours. */
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING &&
	    !ctp_in_vfork_child() && (uint32_t)syscall(SYS_getpid) == ctp_proc.pid &&
	    ctp_own_fd_valid(&sock))
		syscall(SYS_sendto, sock, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
	errno = saved;
}

void ctp_connection_send_exec(void)
{
	struct ctp_msg_header h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_EXEC};
	send_notice(&h, sizeof(h));
}

void ctp_connection_send_forked(void)
{
	struct ctp_msg_header h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_FORKED};
	send_notice(&h, sizeof(h));
}

void ctp_connection_send_spawned(int pid)
{
	struct ctp_msg_spawned m = {.h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_SPAWNED},
				    .pid = (uint32_t)pid};
	send_notice(&m, sizeof(m));
}

/* Whether a new image could connect by the socket's path with this process's credentials. */
static bool path_reachable(void)
{
	const char *path = ctp_proc.config.socket_path;
	if (!path)
		return true;
	/* ENOENT too: a process that changed its root (chroot) no longer sees the path. */
	long rc = syscall(SYS_faccessat2, AT_FDCWD, path, W_OK, AT_EACCESS);
	return rc == 0 || errno == ENOSYS;
}

int ctp_connection_for_exec(bool loads_preload)
{
	int saved = errno;
	int fd = -1;
	/* A vfork child (of this process: it runs in its memory) has a copy of the connection and
	 * writes nothing here but on its own stack and fds: it may hand one over too. */
	uint32_t traced_pid = (uint32_t)syscall(ctp_in_vfork_child() ? SYS_getppid : SYS_getpid);
	/* The new image connects by the path when it can, unless this process's own connection
	 * was passed over another: the collector takes a passed connection in only once it has
	 * read the one it came over, and may not have yet; the new image's hello, by the path,
	 * would then come first, and the trace would list the image before the one it replaced.
	 * Passed over this connection, it comes after. */
	if (!loads_preload ||
	    __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING ||
	    traced_pid != ctp_proc.pid || !ctp_own_fd_valid(&sock) ||
	    (!connection_passed && path_reachable()))
		goto out;
	int pair[2];
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		    pair) != 0)
		goto out;
	long budget = CONNECT_PATIENCE_MS;
	struct ctp_msg_header h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_CONNECT};
	bool sent = send_with_fd(sock, &h, sizeof(h), pair[1], &budget);
	syscall(SYS_close, pair[1]);
	/* Where the program is least likely to look, and open across the exec. */
	fd = sent ? ctp_own_fd_dup_high_inherited(pair[0]) : -1;
	syscall(SYS_close, pair[0]);
out:
	errno = saved;
	return fd;
}

void ctp_connection_exec_failed(int fd)
{
	int saved = errno;
	if (fd >= 0)
		syscall(SYS_close, fd); /* the collector drops a connection that closes unused */
	errno = saved;
}

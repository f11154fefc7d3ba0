/* The I/O hooks leave errno exactly as the real call set it: on failures the tracer ignores
 * (EBADF), on the would-block path it records (EAGAIN, with an unwind and a ring write), and on
 * close of an fd it knows. Exits 1 with a message on the first difference. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures;

static void expect_errno(const char *what, long rc, int want)
{
	int got = errno;
	if (rc != -1 || got != want) {
		fprintf(stderr, "%s: rc %ld errno %d (%s), expected -1 errno %d\n", what, rc, got,
			strerror(got), want);
		failures++;
	}
}

int main(void)
{
	char c;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		return 1;
	int bad = 1000; /* below the tracer's own fds, not open */

	errno = 0;
	expect_errno("read of a closed fd", read(bad, &c, 1), EBADF);
	errno = 0;
	expect_errno("recv of a closed fd", recv(bad, &c, 1, 0), EBADF);
	errno = 0;
	expect_errno("read that would block", read(sv[0], &c, 1), EAGAIN);
	errno = 0;
	expect_errno("recv that would block", recv(sv[0], &c, 1, 0), EAGAIN);
	errno = 0;
	expect_errno("accept on a non-listening socket", accept(sv[0], NULL, NULL), EINVAL);

	/* A success leaves errno alone, also when it ends a wait. */
	if (write(sv[1], "x", 1) != 1)
		return 1;
	errno = 12345;
	long rc = read(sv[0], &c, 1);
	if (rc != 1 || errno != 12345) {
		fprintf(stderr, "successful read changed errno to %d\n", errno);
		failures++;
	}
	struct pollfd p = {.fd = sv[0], .events = POLLIN};
	errno = 777;
	if (poll(&p, 1, 0) != 0 || errno != 777) {
		fprintf(stderr, "poll that found nothing changed errno to %d\n", errno);
		failures++;
	}
	/* close of an fd the tracer knows of (it waited on it) keeps close's errno. */
	errno = 4242;
	if (close(sv[0]) != 0 || errno != 4242) {
		fprintf(stderr, "close changed errno to %d\n", errno);
		failures++;
	}
	errno = 0;
	expect_errno("close of a closed fd", close(sv[0]), EBADF);
	errno = 0;
	expect_errno("dup2 from a closed fd", dup2(bad, sv[1]), EBADF);
	if (failures)
		return 1;
	puts("errno kept");
	return 0;
}

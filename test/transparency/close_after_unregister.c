/* Closes of fds that were registered with epoll and taken out again first, as Asio does with
 * every socket it closes: EPOLL_CTL_DEL then close, EPOLL_CTL_DEL then dup2 onto the fd, a close
 * of an fd still registered, and a close of an fd no readiness API ever named. Prints the fd
 * numbers of each, and what each call returned. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static int pipe_read_end(int *write_end)
{
	int fds[2];
	if (pipe(fds) != 0)
		die("pipe");
	*write_end = fds[1];
	return fds[0];
}

static void add(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = fd};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		die("epoll_ctl ADD");
}

static void del(int epfd, int fd)
{
	if (epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL) != 0)
		die("epoll_ctl DEL");
}

int main(void)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1");
	int w1, w2, w3, w4;
	int taken_out = pipe_read_end(&w1), dup_target = pipe_read_end(&w2),
	    still_in = pipe_read_end(&w3), never_named = pipe_read_end(&w4);

	add(epfd, taken_out);
	del(epfd, taken_out);
	errno = 0;
	int rc = close(taken_out);
	printf("taken out, then closed: fd %d, close %d errno %d\n", taken_out, rc, errno);

	add(epfd, dup_target);
	del(epfd, dup_target);
	rc = dup2(w1, dup_target);
	printf("taken out, then dup2 onto it: fd %d, dup2 %d\n", dup_target, rc);

	add(epfd, still_in);
	rc = close(still_in);
	printf("closed while registered: fd %d, close %d\n", still_in, rc);

	rc = close(never_named);
	printf("never named: fd %d, close %d\n", never_named, rc);

	/* A second close of a closed fd fails as untraced. */
	errno = 0;
	rc = close(taken_out);
	printf("closed again: close %d errno %s\n", rc, strerrorname_np(errno));
	return 0;
}

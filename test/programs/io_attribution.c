/* A lost wakeup in miniature. A reader coroutine reads a non-blocking socket that has no data
 * (EAGAIN) and yields to the scheduler. Mode "lost": the scheduler then closes that socket in
 * close_lost_fd() and never resumes the reader. Mode "resumed": the scheduler sends a byte and
 * resumes the reader, which reads it and returns; only then is the socket closed. Prints the fd
 * the reader waited on. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t sched_ctx, reader_ctx;
static int sv[2];
static int reader_done;

static void yield_to_scheduler(void)
{
	swapcontext(&reader_ctx, &sched_ctx);
}

static void reader(void)
{
	char c;
	for (;;) {
		ssize_t n = read(sv[0], &c, 1);
		if (n == 1)
			break;
		if (n < 0 && errno == EAGAIN) {
			yield_to_scheduler(); /* wait until the scheduler says it is readable */
			continue;
		}
		perror("read");
		exit(1);
	}
	reader_done = 1;
}

static void close_lost_fd(int fd)
{
	if (close(fd) != 0) {
		perror("close");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int lost = argc > 1 && strcmp(argv[1], "lost") == 0;
	static char stack[128 * 1024];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0) {
		perror("socketpair");
		return 1;
	}
	getcontext(&reader_ctx);
	reader_ctx.uc_stack.ss_sp = stack;
	reader_ctx.uc_stack.ss_size = sizeof(stack);
	reader_ctx.uc_link = &sched_ctx;
	makecontext(&reader_ctx, reader, 0);
	swapcontext(&sched_ctx, &reader_ctx); /* runs until the read would block */

	if (lost) {
		close_lost_fd(sv[0]); /* the bug: the reader is never told */
	} else {
		if (write(sv[1], "x", 1) != 1)
			return 1;
		swapcontext(&sched_ctx, &reader_ctx);
		if (!reader_done)
			return 1;
		close(sv[0]);
	}
	close(sv[1]);
	printf("%d\n", sv[0]);
	return 0;
}

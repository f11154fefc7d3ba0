/* Own fds: the program closes every fd above 2 (closefrom, a raw close_range, or a daemon's
 * close loop), then works with high fds of its choosing: a socketpair dup'd onto 900 and 901,
 * used from a coroutine, inherited by a forked child that uses its copies, then closed and
 * checked closed. A tracer must neither lose its own fds silently nor take the app's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

static ucontext_t main_ctx, io_ctx;
static char io_stack[64 * 1024];

static void die(const char *what)
{
	printf("%s failed: %s\n", what, strerror(errno));
	exit(1);
}

/* Runs on a coroutine: one message over 900 -> 901, and back over 901 -> 900. */
static void io_body(void)
{
	char buf[32] = "";
	if (write(900, "ping", 4) != 4)
		die("write 900");
	swapcontext(&io_ctx, &main_ctx);
	ssize_t n = read(901, buf, sizeof(buf) - 1);
	if (n < 0)
		die("read 901");
	buf[n] = 0;
	printf("coroutine read on 901: %s\n", buf);
	if (write(901, "pong", 4) != 4)
		die("write 901");
	n = read(900, buf, sizeof(buf) - 1);
	if (n < 0)
		die("read 900");
	buf[n] = 0;
	printf("coroutine read on 900: %s\n", buf);
}

static void work(void)
{
	int first = open("/dev/null", O_RDONLY);
	printf("first open gets fd %d\n", first);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		die("socketpair");
	if (dup2(sv[0], 900) != 900)
		die("dup2 900");
	if (fcntl(sv[1], F_DUPFD, 901) != 901)
		die("F_DUPFD 901");
	close(sv[0]);
	close(sv[1]);
	close(first);

	getcontext(&io_ctx);
	io_ctx.uc_stack.ss_sp = io_stack;
	io_ctx.uc_stack.ss_size = sizeof(io_stack);
	io_ctx.uc_link = &main_ctx;
	makecontext(&io_ctx, io_body, 0);
	swapcontext(&main_ctx, &io_ctx);
	swapcontext(&main_ctx, &io_ctx);

	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		tp_touch_coroutine();
		char buf[16] = "";
		if (write(901, "child", 5) != 5)
			_exit(3);
		if (read(900, buf, sizeof(buf) - 1) != 5)
			_exit(4);
		_exit(strcmp(buf, "child") == 0 ? 0 : 5);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	printf("child used its copies of 900/901: exit %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	close(900);
	close(901);
	for (int fd = 900; fd <= 901; fd++) {
		errno = 0;
		int r = fcntl(fd, F_GETFD);
		printf("after close, fd %d: %s\n", fd,
		       r == -1 && errno == EBADF ? "closed" : "still open");
	}
	int again = open("/dev/null", O_RDONLY);
	printf("next open gets fd %d\n", again);
	close(again);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "closefrom";
	tp_touch_coroutine();
	if (strcmp(how, "closefrom") == 0) {
		closefrom(3);
	} else if (strcmp(how, "close_range") == 0) {
		if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
			die("close_range");
	} else if (strcmp(how, "loop") == 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else {
		return 2;
	}
	printf("%s: fds above 2 closed\n", how);
	work();
	tp_touch_coroutine();
	printf("done\n");
	return 0;
}

/* Programs left one or two free file descriptors, as a daemon that its parent's files and a
 * tight limit leave short. Started with no argument, it starts itself again as "child N" for N
 * = 1, then 2, each from a fork child that takes every number below FD_LIMIT - N (files open
 * across the exec) and lowers its limit of open files to FD_LIMIT; it says how each ended.
 * A child says whether dlerror() has a failure to report (none of its own), switches to a
 * coroutine, and with one fd to spare opens a file in that number and closes it. */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

enum { FD_LIMIT = 8 };

static int child(int spare)
{
	const char *pending = dlerror();
	printf("child %d: dlerror: %s\n", spare, pending ? pending : "none");
	tp_touch_coroutine();
	printf("child %d: switched\n", spare);
	if (spare == 1) {
		int fd = open("/dev/null", O_RDONLY);
		printf("child 1: opened fd %d\n", fd);
		printf("child 1: closed: %d\n", fd >= 0 ? close(fd) : -1);
	}
	return 0;
}

/* In a fork child: every number below FD_LIMIT - spare taken, the limit lowered, then the
 * exec. */
static void start_short(const char *self, int spare)
{
	char arg[16];
	snprintf(arg, sizeof(arg), "%d", spare);
	int fd;
	do
		fd = open("/dev/null", O_RDONLY);
	while (fd >= 0 && fd < FD_LIMIT - spare - 1);
	if (fd != FD_LIMIT - spare - 1) {
		fprintf(stderr, "one_fd_left: fds below %d are not all free to take (got %d)\n",
			FD_LIMIT - spare, fd);
		_exit(2);
	}
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = FD_LIMIT;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		perror("setrlimit");
		_exit(2);
	}
	execl("/proc/self/exe", self, "child", arg, (char *)NULL);
	perror("execl");
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "child") == 0)
		return child(atoi(argv[2]));
	for (int spare = 1; spare <= 2; spare++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			start_short(argv[0], spare);
		int status = -1;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			printf("child %d: status %#x\n", spare, status);
		else
			printf("child %d: exit %d\n", spare, WEXITSTATUS(status));
	}
	return 0;
}

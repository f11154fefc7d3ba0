/* A program that sandboxes itself once started, as a server does before it serves: a seccomp
 * filter makes memfd_create fail with EPERM (a tracer's fork child needs it for a segment of its
 * own). It forks a child that switches to a coroutine and writes a pipe, and says how the
 * child ended; then switches to its own coroutine again. With "stderr-reused" it first closes
 * fd 2 and opens a data file of its own there, as a daemon may, and at the end prints what the
 * file holds: only its own line. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

static void deny_memfd_create(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("seccomp");
		exit(2);
	}
}

/* fd 2 becomes the data file: the program's own line in it. */
static void data_file_at_fd2(void)
{
	close(2);
	if (open("data", O_RDWR | O_CREAT | O_TRUNC, 0600) != 2 || write(2, "data\n", 5) != 5)
		exit(2);
}

static void print_data_file(void)
{
	char buf[4096];
	ssize_t n = pread(2, buf, sizeof(buf), 0);
	printf("data file: %.*s", n > 0 ? (int)n : 0, buf);
}

int main(int argc, char **argv)
{
	bool reused = argc > 1 && strcmp(argv[1], "stderr-reused") == 0;
	tp_touch_coroutine();
	if (reused)
		data_file_at_fd2();
	deny_memfd_create();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		tp_touch_coroutine();
		int p[2];
		int piped = pipe(p);
		printf("child: pipe %d, write %zd\n", piped, piped == 0 ? write(p[1], "x", 1) : -1);
		fflush(stdout);
		_exit(3);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	printf("child: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	swapcontext(&tp_main_ctx, &tp_coro_ctx); /* the coroutine returns to main at last */
	printf("parent: switched\n");
	if (reused)
		print_data_file();
	return 0;
}

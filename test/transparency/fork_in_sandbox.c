/* A program that sandboxes itself once started, as a server does before it serves: a seccomp
 * filter makes memfd_create fail with EPERM (a tracer's fork child needs it for a segment of its
 * own). It forks a child that switches to a coroutine and writes a pipe, and says how the
 * child ended; then switches to its own coroutine again. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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

int main(void)
{
	tp_touch_coroutine();
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
	return 0;
}

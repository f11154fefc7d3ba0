/* File numbers while threads start: the program installs an SA_ONSTACK handler, then main
 * starts 5000 threads one after the other and, while each starts, opens /dev/null 20 times,
 * each of which must get the lowest free number (3: POSIX promises the lowest), closing it each
 * time. Prints how many opens got another number (0 untraced). The preload used to open
 * /proc/self/maps at each thread's start (for its stack's bounds), and, once such a handler was
 * installed, /proc/sys/vm/overcommit_memory too: while open, their fd took the number the
 * program's open would have had (12,000-18,000 opens of 100,000 in five runs). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "tp_coro.h"

enum { THREADS = 5000 };

static void on_usr1(int sig)
{
	(void)sig;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	tp_touch_coroutine();
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 2;
	}
	int other = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
		for (int k = 0; k < 20; k++) {
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd != 3)
				other++;
			close(fd);
		}
		pthread_join(t, NULL);
	}
	printf("opens that did not get fd 3: %d\n", other);
	return 0;
}

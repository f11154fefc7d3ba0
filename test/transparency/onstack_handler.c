/* A handler installed with SA_ONSTACK by a program that never sets a signal stack of its own:
 * untraced it runs on the interrupted thread's stack, so it may use as much of it as code on
 * that stack may. This one uses 512 KiB, in main and in a new thread, and then says so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

enum { HANDLER_STACK_KIB = 512 };

static volatile int sink;

/* One KiB of stack per level, kept by the volatile buffer. */
static int use_stack(int kib)
{
	volatile char buf[1024];
	memset((char *)buf, kib, sizeof(buf));
	return kib ? use_stack(kib - 1) + buf[kib % sizeof(buf)] : buf[0];
}

static void on_usr1(int sig)
{
	(void)sig;
	sink = use_stack(HANDLER_STACK_KIB);
}

static void run_handler(const char *where)
{
	raise(SIGUSR1);
	printf("%s: a handler used %d KiB of stack\n", where, HANDLER_STACK_KIB);
	fflush(stdout);
}

static void *thread_main(void *arg)
{
	(void)arg;
	run_handler("new thread");
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 2;
	}
	run_handler("main");
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0 || pthread_join(th, NULL) != 0) {
		fputs("pthread_create failed\n", stderr);
		return 2;
	}
	return 0;
}

/* Signals 1e and 1f. "default": a NULL write with SIGSEGV's default action: dies of SIGSEGV
 * (with a core where the limit allows). "handler-before"/"handler-after": the program installs
 * its own SIGSEGV handler before or after first touching a coroutine; the handler prints and
 * _exit(42)s, traced or not. */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tp_coro.h"

static void on_segv(int sig)
{
	static const char msg[] = "own handler: SIGSEGV\n";
	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(43);
	_exit(42);
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0) {
		perror("sigaction");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "default";
	if (strcmp(mode, "handler-before") == 0)
		install();
	tp_touch_coroutine();
	if (strcmp(mode, "handler-after") == 0)
		install();
	printf("%s: about to fault\n", mode);
	fflush(stdout);
	*(volatile int *)(uintptr_t)8 = 1;
	printf("survived the fault\n");
	return 0;
}

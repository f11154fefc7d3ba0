/* Signals 1i: a program that stops itself, first with SIGSTOP (as one that waits for a debugger
 * to attach), then with SIGTSTP at its default action (as a curses program does once it has put
 * the terminal back for a ^Z), and goes on each time it is continued; then prints "ready" and
 * waits, for the harness's ^Z to its process group, fg, and SIGTERM. */
#include <signal.h>
#include <unistd.h>

#include "tp_coro.h"

int main(void)
{
	tp_touch_coroutine();
	printf("coroutine touched\n");
	fflush(stdout);
	raise(SIGSTOP);
	printf("continued after SIGSTOP\n");
	fflush(stdout);
	raise(SIGTSTP);
	printf("continued after SIGTSTP\n");
	tp_ready();
	for (;;)
		pause();
}

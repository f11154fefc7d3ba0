/* Signals 1j: a program that catches SIGTSTP and goes on rather than stopping (as one that
 * takes ^Z as a command does): prints "ready", waits for the signal, says so, and exits 0. */
#include <signal.h>
#include <string.h>

#include "tp_coro.h"

static volatile sig_atomic_t got_tstp;

static void on_tstp(int sig)
{
	(void)sig;
	got_tstp = 1;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	sigset_t tstp, old;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	sigprocmask(SIG_BLOCK, &tstp, &old);
	tp_touch_coroutine();
	tp_ready();
	while (!got_tstp)
		sigsuspend(&old);
	printf("got SIGTSTP, going on\n");
	return 0;
}

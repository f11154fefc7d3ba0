/* Signals 1a and 1g: prints "ready", then waits in pause() until a signal ends it (Ctrl-C on
 * its terminal, or SIGTERM from the harness). With the default actions it must die of that
 * signal, traced or not. */
#include <unistd.h>

#include "tp_coro.h"

int main(void)
{
	tp_touch_coroutine();
	printf("coroutine touched\n");
	tp_ready();
	for (;;)
		pause();
}

/* Signals 1c: a breakpoint instruction (int3) with no debugger: dies of SIGTRAP. */
#include "tp_coro.h"

int main(void)
{
	tp_touch_coroutine();
	printf("before int3\n");
	fflush(stdout);
	__asm__ volatile("int3");
	printf("after int3\n");
	return 0;
}

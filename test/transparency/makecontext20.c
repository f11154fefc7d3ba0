/* makecontext with 20 arguments (glibc passes them as 64-bit words; 6 in registers, the rest on
 * the new stack): the entry prints all of them, suspends once (so that the trace has a stack of
 * it whose outermost frame lies below the entry function), then returns through uc_link. */
#include "tp_coro.h"

static ucontext_t main_ctx, co_ctx;
static char co_stack[64 * 1024];

static void entry20(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9, int a10,
		    int a11, int a12, int a13, int a14, int a15, int a16, int a17, int a18, int a19,
		    int a20)
{
	printf("entry got: %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", a1, a2,
	       a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20);
	swapcontext(&co_ctx, &main_ctx);
}

int main(void)
{
	tp_touch_coroutine();
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, (void (*)(void))entry20, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
		    14, 15, 16, 17, 18, 19, 20);
	swapcontext(&main_ctx, &co_ctx);
	printf("main: the entry suspended\n");
	swapcontext(&main_ctx, &co_ctx);
	printf("main: the entry returned through uc_link\n");
	return 0;
}

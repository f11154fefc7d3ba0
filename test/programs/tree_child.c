/* The child of tree_parent: N round trips of a ucontext ping-pong, then exits with N. */
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, co_ctx;
static char stack[64 * 1024];

static void bounce(void)
{
	for (;;)
		swapcontext(&co_ctx, &main_ctx);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	makecontext(&co_ctx, bounce, 0);
	for (int i = 0; i < n; i++)
		swapcontext(&main_ctx, &co_ctx);
	return n;
}

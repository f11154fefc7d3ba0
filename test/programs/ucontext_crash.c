/* A coroutine that dereferences NULL after some switches, while another one is suspended.
 * Before it crashes it writes to stderr how many switches were made ("switches N"), so the
 * test can check that the trace has every one of them.
 *
 *   ucontext_crash [ROUNDS]   (default 50) */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, crasher_ctx, bystander_ctx;
static char crasher_stack[STACK_SIZE], bystander_stack[STACK_SIZE];
static int rounds;
static long switches;
static int *volatile nowhere; /* volatile: the compiler may not drop the store through it */

static void bystander(void)
{
	switches++;
	swapcontext(&bystander_ctx, &main_ctx);
}

static void crasher(void)
{
	for (int i = 0; i < rounds; i++) {
		switches++;
		swapcontext(&crasher_ctx, &main_ctx);
	}
	fprintf(stderr, "switches %ld\n", switches);
	*nowhere = 1;
}

static void make(ucontext_t *ctx, char *stack, void (*fn)(void))
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = STACK_SIZE;
	ctx->uc_link = &main_ctx;
	makecontext(ctx, fn, 0);
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 50;
	make(&bystander_ctx, bystander_stack, bystander);
	make(&crasher_ctx, crasher_stack, crasher);
	switches++;
	swapcontext(&main_ctx, &bystander_ctx);
	for (;;) {
		switches++;
		swapcontext(&main_ctx, &crasher_ctx);
	}
}

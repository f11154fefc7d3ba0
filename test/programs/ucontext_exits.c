/* Every way a ucontext coroutine can end, or not end:
 *   by_return               returns; glibc switches to uc_link (main)
 *   by_setcontext           setcontexts to another coroutine, resumed_by_setcontext
 *   resumed_by_setcontext   suspended, resumed by that setcontext, later returns to main
 *   to_main_by_setcontext   setcontexts straight back to main
 *   parked                  suspends in park_forever and is never resumed
 *   never_run               made and never resumed
 * The switches, in order, are listed in the integration test. */
#include <stdio.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

enum { BY_RETURN, BY_SETCONTEXT, RESUMED, TO_MAIN, PARKED, NEVER_RUN, NCOROS };

static ucontext_t main_ctx, ctx[NCOROS];
static char stacks[NCOROS][STACK_SIZE];

static void yield(int self)
{
	swapcontext(&ctx[self], &main_ctx);
}

static void by_return(void)
{
	yield(BY_RETURN);
}

static void by_setcontext(void)
{
	yield(BY_SETCONTEXT);
	setcontext(&ctx[RESUMED]);
}

static void resumed_by_setcontext(void)
{
	yield(RESUMED);
	yield(RESUMED); /* by_setcontext resumes us here */
}

static void to_main_by_setcontext(void)
{
	setcontext(&main_ctx);
}

static void park_forever(void)
{
	yield(PARKED);
	printf("parked was resumed\n");
}

static void parked(void)
{
	park_forever();
}

static void never_run(void)
{
	printf("never_run ran\n");
}

static void make(int i, void (*fn)(void))
{
	getcontext(&ctx[i]);
	ctx[i].uc_stack.ss_sp = stacks[i];
	ctx[i].uc_stack.ss_size = STACK_SIZE;
	ctx[i].uc_link = &main_ctx;
	makecontext(&ctx[i], fn, 0);
}

static void resume(int i)
{
	swapcontext(&main_ctx, &ctx[i]);
}

int main(void)
{
	make(BY_RETURN, by_return);
	make(BY_SETCONTEXT, by_setcontext);
	make(RESUMED, resumed_by_setcontext);
	make(TO_MAIN, to_main_by_setcontext);
	make(PARKED, parked);
	make(NEVER_RUN, never_run);

	resume(BY_RETURN);     /* it yields */
	resume(BY_SETCONTEXT); /* it yields */
	resume(RESUMED);       /* it yields */
	resume(BY_SETCONTEXT); /* it ends by setcontext to RESUMED, which yields to us */
	resume(BY_RETURN);     /* it returns */
	resume(RESUMED);       /* it returns */
	resume(PARKED);	       /* it parks forever */
	resume(TO_MAIN);       /* it ends by setcontext to main */
	printf("done\n");
	return 0;
}

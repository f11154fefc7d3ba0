/* Coroutines that suspend inside distinct named functions, so that their suspend stacks can be
 * checked: each call of yield() below carries a marker comment the test looks up to know the
 * line the stack must point at.
 *
 * Every function is noinline (the test programs are built with -fno-inline as well). */
#include <stdio.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)
#define NOINLINE __attribute__((noinline))

enum { INPUT, TIMER, LOCK, NCOROS };

static ucontext_t main_ctx, ctx[NCOROS];
static char stacks[NCOROS][STACK_SIZE];
static volatile int progress;

static NOINLINE void yield(int self)
{
	swapcontext(&ctx[self], &main_ctx); /* SUSPEND:yield */
	progress++;			    /* keeps the call from being a tail call */
}

static NOINLINE void wait_for_input(void)
{
	yield(INPUT); /* SUSPEND:wait_for_input */
	progress++;
}

static NOINLINE void wait_for_timer(void)
{
	yield(TIMER); /* SUSPEND:wait_for_timer */
	progress++;
}

static NOINLINE void wait_for_lock(void)
{
	yield(LOCK); /* SUSPEND:wait_for_lock */
	progress++;
}

static NOINLINE void reader(void)
{
	wait_for_input(); /* CALL:reader */
	progress++;
}

static NOINLINE void sleeper(void)
{
	wait_for_timer(); /* CALL:sleeper */
	progress++;
}

static NOINLINE void locker(void)
{
	wait_for_lock(); /* CALL:locker */
	progress++;
}

static void make(int i, void (*fn)(void))
{
	getcontext(&ctx[i]);
	ctx[i].uc_stack.ss_sp = stacks[i];
	ctx[i].uc_stack.ss_size = STACK_SIZE;
	ctx[i].uc_link = &main_ctx;
	makecontext(&ctx[i], fn, 0);
}

int main(void)
{
	make(INPUT, reader);
	make(TIMER, sleeper);
	make(LOCK, locker);
	for (int i = 0; i < NCOROS; i++)
		swapcontext(&main_ctx, &ctx[i]);
	printf("all suspended\n");
	return 0;
}

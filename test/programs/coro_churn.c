/* A long-running program that makes a coroutine per job, as a server makes one per request
 * (pdns-recursor's MTasker): COUNT ucontext coroutines, one after another on the same stack.
 * Each is resumed, suspends once in wait_for_work, is resumed again and returns through uc_link.
 * Prints how many it made and ended.
 *
 *   coro_churn [COUNT]   (default 100000) */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, job_ctx;
static long ended;

static void wait_for_work(void)
{
	swapcontext(&job_ctx, &main_ctx);
}

static void job(void)
{
	wait_for_work();
	ended++;
}

/* One job: made, run to its wait, run to its end. Apart from main's loop, which getcontext (it
 * returns twice) would otherwise leave the compiler unsure of. */
static void run_job(void)
{
	static char stack[64 * 1024];
	getcontext(&job_ctx);
	job_ctx.uc_stack.ss_sp = stack;
	job_ctx.uc_stack.ss_size = sizeof(stack);
	job_ctx.uc_link = &main_ctx;
	makecontext(&job_ctx, job, 0);
	swapcontext(&main_ctx, &job_ctx); /* runs until wait_for_work */
	swapcontext(&main_ctx, &job_ctx); /* runs to its return */
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000;
	for (long i = 0; i < count; i++)
		run_job();
	printf("made %ld ended %ld\n", count, ended);
	return 0;
}

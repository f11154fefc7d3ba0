/* Coroutines that are forgotten: FORGOTTEN are made by `spawn_forgotten`, run once, suspend and
 * are never resumed again; FINISHED more are made by `spawn_finished` and run to their end. The
 * report must count the forgotten ones as one leak, created in spawn_forgotten, and as stuck.
 * With `exit`, the program ends by calling exit(0) from a coroutine of its own, which runs then:
 * the process's end ends it, and nothing forgot it.
 *
 *   report_leak [FORGOTTEN [FINISHED [exit]]]   (defaults 5 and 3) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx;

struct coro {
	ucontext_t ctx;
	char stack[STACK_SIZE];
};

static struct coro *current;

static void wait_for_a_wakeup_that_never_comes(void)
{
	swapcontext(&current->ctx, &main_ctx);
}

static void body(void)
{
	wait_for_a_wakeup_that_never_comes();
}

static void quick(void)
{
}

static struct coro *make(void (*fn)(void))
{
	struct coro *c = malloc(sizeof(*c));
	if (!c)
		exit(1);
	getcontext(&c->ctx);
	c->ctx.uc_stack.ss_sp = c->stack;
	c->ctx.uc_stack.ss_size = STACK_SIZE;
	c->ctx.uc_link = &main_ctx;
	makecontext(&c->ctx, fn, 0);
	return c;
}

static void run(struct coro *c)
{
	current = c;
	swapcontext(&main_ctx, &c->ctx);
}

static void spawn_forgotten(void)
{
	run(make(body));
}

static void spawn_finished(void)
{
	run(make(quick));
}

static void end_the_program(void)
{
	puts("done");
	exit(0);
}

int main(int argc, char **argv)
{
	int forgotten = argc > 1 ? atoi(argv[1]) : 5;
	int finished = argc > 2 ? atoi(argv[2]) : 3;
	for (int i = 0; i < forgotten; i++)
		spawn_forgotten();
	for (int i = 0; i < finished; i++)
		spawn_finished();
	if (argc > 3 && strcmp(argv[3], "exit") == 0)
		run(make(end_the_program));
	puts("done");
	return 0;
}

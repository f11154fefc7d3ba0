/* longjmp idioms. "errors": setjmp/longjmp as error handling within one stack, on the main stack
 * and inside a coroutine, nested (no switch: a tracer must see none). "qemu": coroutines in the
 * style of QEMU's coroutine-ucontext, started by one swapcontext each and switched from then on
 * by sigsetjmp(from) + siglongjmp(to); it prints the interleaving and how many jumps it made. */
#include <setjmp.h>
#include <string.h>

#include "tp_coro.h"

enum { COROS = 3, STEPS = 4 };

/* ---- errors ---- */

static jmp_buf outer, inner;

/* A few frames deep, as an error raised far from where it is caught. */
static __attribute__((noinline)) void fail_here(jmp_buf *where)
{
	longjmp(*where, 7);
}

static __attribute__((noinline)) void fail_below(jmp_buf *where)
{
	fail_here(where);
}

static __attribute__((noinline)) void fail_deep(jmp_buf *where)
{
	fail_below(where);
}

static int try_twice(void)
{
	volatile int caught = 0;
	if (setjmp(outer) == 0) {
		if (setjmp(inner) == 0)
			fail_deep(&inner);
		else
			caught++;
		fail_deep(&outer);
	} else {
		caught++;
	}
	return caught;
}

static ucontext_t err_main, err_co;
static char err_stack[64 * 1024];
static int err_in_coroutine;

static void err_body(void)
{
	err_in_coroutine = try_twice();
	swapcontext(&err_co, &err_main);
}

static int errors(void)
{
	printf("main stack: caught %d\n", try_twice());
	getcontext(&err_co);
	err_co.uc_stack.ss_sp = err_stack;
	err_co.uc_stack.ss_size = sizeof(err_stack);
	err_co.uc_link = &err_main;
	makecontext(&err_co, err_body, 0);
	swapcontext(&err_main, &err_co);
	printf("coroutine: caught %d\n", err_in_coroutine);
	return 0;
}

/* ---- qemu ---- */

struct coro {
	sigjmp_buf env;
	ucontext_t uc;
	char stack[64 * 1024];
	int id;
};

static struct coro coros[COROS];
static sigjmp_buf sched_env;
static sigjmp_buf *creator_env;
static volatile long jumps;

/* Switches from `from` to `to`: QEMU's qemu_coroutine_switch. */
static void jump(sigjmp_buf *from, sigjmp_buf *to)
{
	if (sigsetjmp(*from, 0) == 0) {
		jumps++;
		siglongjmp(*to, 1);
	}
}

static void trampoline(int id)
{
	struct coro *c = &coros[id];
	/* Started by swapcontext: save ourselves and go back to the creator at once. */
	jump(&c->env, creator_env);
	for (int step = 0; step < STEPS; step++) {
		printf("coroutine %d step %d\n", c->id, step);
		jump(&c->env, &sched_env);
	}
	printf("coroutine %d done\n", c->id);
	jump(&c->env, &sched_env);
}

static void start(int id)
{
	static ucontext_t creator_uc;
	static sigjmp_buf creator;
	struct coro *c = &coros[id];
	c->id = id;
	getcontext(&c->uc);
	c->uc.uc_stack.ss_sp = c->stack;
	c->uc.uc_stack.ss_size = sizeof(c->stack);
	c->uc.uc_link = NULL;
	makecontext(&c->uc, (void (*)(void))trampoline, 1, id);
	creator_env = &creator;
	if (sigsetjmp(creator, 0) == 0)
		swapcontext(&creator_uc, &c->uc);
}

static volatile int sched_round, sched_next;

static int qemu(void)
{
	for (int i = 0; i < COROS; i++)
		start(i);
	for (sched_round = 0; sched_round <= STEPS; sched_round++)
		for (sched_next = 0; sched_next < COROS; sched_next++)
			jump(&sched_env, &coros[sched_next].env);
	printf("jumps between coroutines: %ld\n", jumps);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "qemu") == 0)
		return qemu();
	return errors();
}

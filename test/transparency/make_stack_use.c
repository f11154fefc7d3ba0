/* How much of a coroutine's stack it uses to make another coroutine: a coroutine on a 16 KiB
 * stack filled with a pattern makes a child with make_fcontext (as a Boost.Fiber that starts
 * fibers does) or with makecontext, runs the child to its first suspend, and returns. The
 * program writes how deep into its stack anything was written to make_stack_use.txt in its
 * working directory (the case compares the runs): the tracer's make hook runs on that stack, and
 * with thousands of small stacks every byte it adds is resident memory.
 *
 * Usage: make_stack_use fcontext|ucontext */
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "fcontext_abi.h"

enum { STACK = 16 * 1024, PATTERN = 0xa5 };

static int use_fcontext;
static unsigned char maker_stack[STACK] __attribute__((aligned(64)));
static unsigned char child_stack[STACK] __attribute__((aligned(64)));
static ucontext_t u_main, u_maker, u_child;
static fcontext_t f_main, f_child;

static void child_body_u(void)
{
	swapcontext(&u_child, &u_maker);
}

static void child_body_f(transfer_t from)
{
	jump_fcontext(from.fctx, NULL);
}

/* A ucontext coroutine on stack, running fn, back to link when fn returns. */
static void make_u(ucontext_t *c, unsigned char *stack, ucontext_t *link, void (*fn)(void))
{
	getcontext(c);
	c->uc_stack.ss_sp = stack;
	c->uc_stack.ss_size = STACK;
	c->uc_link = link;
	makecontext(c, fn, 0);
}

/* The maker: one child made and run to its first suspend, then back to main. */
static void maker_u(void)
{
	make_u(&u_child, child_stack, &u_maker, child_body_u);
	swapcontext(&u_maker, &u_child);
	swapcontext(&u_maker, &u_main);
}

static void maker_f(transfer_t from)
{
	f_main = from.fctx;
	fcontext_t child = make_fcontext(child_stack + STACK, STACK, child_body_f);
	f_child = jump_fcontext(child, NULL).fctx;
	jump_fcontext(f_main, NULL);
}

int main(int argc, char **argv)
{
	use_fcontext = argc > 1 && strcmp(argv[1], "fcontext") == 0;
	memset(maker_stack, PATTERN, sizeof(maker_stack));
	if (use_fcontext) {
		fcontext_t maker = make_fcontext(maker_stack + STACK, STACK, maker_f);
		jump_fcontext(maker, NULL);
	} else {
		make_u(&u_maker, maker_stack, &u_main, maker_u);
		swapcontext(&u_main, &u_maker);
	}
	size_t untouched = 0;
	while (untouched < STACK && maker_stack[untouched] == PATTERN)
		untouched++;
	FILE *f = fopen("make_stack_use.txt", "w");
	if (!f)
		return 2;
	fprintf(f, "%zu\n", STACK - untouched);
	fclose(f);
	printf("made a child from a coroutine (%s)\n", use_fcontext ? "fcontext" : "ucontext");
	return 0;
}

/* A coroutine that waits at four places in turn, as a SimGrid actor that sends and receives
 * does: ROUNDS rounds of place_a, place_b, place_c and place_d, each suspending with swapcontext
 * from a frame of its own. The program prints how many suspends each place made. The tracer
 * unwinds a coroutine's whole stack only the first time it suspends at a place; it must keep
 * all four places in mind, not walk at every suspend.
 *
 *   suspend_places [ROUNDS]   (default 1000) */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { STACK = 64 * 1024 };

static ucontext_t main_ctx, co_ctx;
static long counts[4];

#define PLACE(name, i)                                                                             \
	static __attribute__((noinline)) void name(void)                                           \
	{                                                                                          \
		counts[i]++;                                                                       \
		swapcontext(&co_ctx, &main_ctx);                                                   \
		__asm__ volatile("" ::: "memory"); /* a frame of its own, not a tail call */       \
	}
PLACE(place_a, 0)
PLACE(place_b, 1)
PLACE(place_c, 2)
PLACE(place_d, 3)

static void body(void)
{
	for (;;) {
		place_a();
		place_b();
		place_c();
		place_d();
	}
}

int main(int argc, char **argv)
{
	static long rounds;
	static char *stack;
	rounds = argc > 1 ? atol(argv[1]) : 1000;
	stack = malloc(STACK);
	if (!stack || getcontext(&co_ctx) != 0)
		return 2;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	for (long i = 0; i < 4 * rounds; i++)
		swapcontext(&main_ctx, &co_ctx);
	printf("suspends at a, b, c, d: %ld %ld %ld %ld\n", counts[0], counts[1], counts[2],
	       counts[3]);
	return 0;
}

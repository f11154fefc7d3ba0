/* Many coroutines made alike, each suspending once at the same call site and at the same depth
 * below its stack's top, reached through one of two callers whose frames are alike: read_header
 * for the coroutines of even groups of GROUP, read_body for those of odd groups. Each is a new
 * coroutine at that place, so the process unwinds each suspend on the switch; a stack it
 * remembered from an earlier coroutine may serve only a coroutine that has the same one.
 *
 * Usage: same_place_many [COROUTINES [GROUP]]   (defaults 60, 10)
 * Prints "coroutines=N group=G". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)
#define NOINLINE __attribute__((noinline))

static ucontext_t main_ctx;
static volatile int progress;
static int use_body; /* the path of the coroutine being started */

static NOINLINE void wait_io(ucontext_t *self)
{
	swapcontext(self, &main_ctx);
	progress++; /* keeps the call from being a tail call */
}

static NOINLINE void read_header(ucontext_t *self)
{
	wait_io(self);
	progress++;
}

static NOINLINE void read_body(ucontext_t *self)
{
	wait_io(self);
	progress++;
}

static NOINLINE void connection(ucontext_t *self)
{
	if (use_body)
		read_body(self);
	else
		read_header(self);
}

/* makecontext passes ints: the context's address in two halves. */
static void entry(unsigned lo, unsigned hi)
{
	connection((ucontext_t *)(((uintptr_t)hi << 32) | lo));
}

/* main's state: statics, since getcontext may return twice (-Wclobbered). */
static int n, group;
static ucontext_t *ctx;
static char *stacks;
static int next;

int main(int argc, char **argv)
{
	n = argc > 1 ? atoi(argv[1]) : 60;
	group = argc > 2 ? atoi(argv[2]) : 10;
	if (n <= 0 || group <= 0) {
		fprintf(stderr, "usage: same_place_many [COROUTINES [GROUP]]\n");
		return 2;
	}
	ctx = calloc((size_t)n, sizeof(*ctx));
	stacks = malloc((size_t)n * STACK_SIZE);
	if (!ctx || !stacks)
		return 1;
	for (next = 0; next < n; next++) {
		getcontext(&ctx[next]);
		ctx[next].uc_stack.ss_sp = stacks + (size_t)next * STACK_SIZE;
		ctx[next].uc_stack.ss_size = STACK_SIZE;
		ctx[next].uc_link = &main_ctx;
		uintptr_t self = (uintptr_t)&ctx[next];
		makecontext(&ctx[next], (void (*)(void))entry, 2, (unsigned)self,
			    (unsigned)(self >> 32));
		use_body = (next / group) % 2;
		swapcontext(&main_ctx, &ctx[next]); /* runs to its suspend */
	}
	for (next = 0; next < n; next++)
		swapcontext(&main_ctx, &ctx[next]); /* and to its end */
	printf("coroutines=%d group=%d\n", n, group);
	free(stacks);
	free(ctx);
	return 0;
}

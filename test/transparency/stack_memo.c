/* Coroutines made alike that suspend once each at one place, through two callers in turn: by
 * groups of GROUP for the first half, then one by one (requests of two kinds, interleaved). The
 * tracer checks stacks it remembered against the words of each new coroutine's stack, and keeps
 * one for each caller. It only reads them: every word of a local array kept on the stack across
 * the suspend is unchanged after it, and so is errno, set to a sentinel before each switch. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

enum { COROUTINES = 400, GROUP = 25, STACK_SIZE = 64 * 1024, WORDS = 64, SENTINEL = 4242 };
#define NOINLINE __attribute__((noinline))

static ucontext_t main_ctx;
static ucontext_t ctx[COROUTINES];
static int use_second;
static long changed_words, changed_errno;
/* main's loop index: a static, since getcontext may return twice (-Wclobbered). */
static int next;

static NOINLINE void suspend_here(ucontext_t *self, uint64_t seed)
{
	volatile uint64_t words[WORDS]; /* on the stack walked, between the frames */
	for (int i = 0; i < WORDS; i++)
		words[i] = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	errno = SENTINEL;
	swapcontext(self, &main_ctx);
	changed_errno += errno != SENTINEL;
	for (int i = 0; i < WORDS; i++)
		changed_words += words[i] != seed * 0x9e3779b97f4a7c15ull + (uint64_t)i;
}

static NOINLINE void first_caller(ucontext_t *self, uint64_t seed)
{
	suspend_here(self, seed);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static NOINLINE void second_caller(ucontext_t *self, uint64_t seed)
{
	suspend_here(self, seed);
	__asm__ volatile("" ::: "memory");
}

static void entry(unsigned lo, unsigned hi)
{
	ucontext_t *self = (ucontext_t *)(((uintptr_t)hi << 32) | lo);
	uint64_t seed = (uint64_t)(self - ctx);
	if (use_second)
		second_caller(self, seed);
	else
		first_caller(self, seed);
}

int main(void)
{
	static char stacks[COROUTINES][STACK_SIZE];
	for (next = 0; next < COROUTINES; next++) {
		getcontext(&ctx[next]);
		ctx[next].uc_stack.ss_sp = stacks[next];
		ctx[next].uc_stack.ss_size = STACK_SIZE;
		ctx[next].uc_link = &main_ctx;
		uintptr_t self = (uintptr_t)&ctx[next];
		makecontext(&ctx[next], (void (*)(void))entry, 2, (unsigned)self,
			    (unsigned)(self >> 32));
		use_second = next < COROUTINES / 2 ? (next / GROUP) % 2 : next % 2;
		errno = SENTINEL;
		swapcontext(&main_ctx, &ctx[next]);
		changed_errno += errno != SENTINEL;
	}
	for (next = 0; next < COROUTINES; next++) {
		errno = SENTINEL;
		swapcontext(&main_ctx, &ctx[next]);
		changed_errno += errno != SENTINEL;
	}
	printf("%d coroutines, stack words changed %ld, errno changed %ld times\n", COROUTINES,
	       changed_words, changed_errno);
	return 0;
}

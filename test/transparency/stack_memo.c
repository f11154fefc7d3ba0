/* Coroutines made alike that suspend once each at one place, through two callers in turn: by
 * groups of GROUP for the first half, then one by one (requests of two kinds, interleaved). The
 * tracer checks stacks it remembered against the words of each new coroutine's stack, and keeps
 * one for each caller. It only reads them: every word of a local array kept on the stack across
 * the suspend is unchanged after it, and so is errno, set to a sentinel before each switch.
 *
 * Built twice: with glibc's ucontext, and with Boost.Context's fcontext (STACK_MEMO_FCONTEXT),
 * whose hooks check the remembered stacks on the switch itself. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#ifdef STACK_MEMO_FCONTEXT
#include "fcontext_abi.h"
#endif

enum { COROUTINES = 400, GROUP = 25, STACK_SIZE = 64 * 1024, WORDS = 64, SENTINEL = 4242 };
#define NOINLINE __attribute__((noinline))

static int use_second;
static long changed_words, changed_errno;
/* main's loop index: a static, since getcontext may return twice (-Wclobbered). */
static int next;

/* A coroutine, and how it suspends and is resumed: the switch is written in suspend_here itself,
 * so that the place it suspends at is there, reached through either caller. */
#ifdef STACK_MEMO_FCONTEXT
typedef int coro_t;		   /* its index */
static fcontext_t ctx[COROUTINES]; /* where each resumes */
static fcontext_t main_ctx;	   /* where main resumes, while a coroutine runs */
#define SUSPEND(self) ((void)(self), main_ctx = jump_fcontext(main_ctx, NULL).fctx)
static void resume(int i)
{
	transfer_t t = jump_fcontext(ctx[i], &ctx[i]);
	ctx[i] = t.fctx;
}
#else
typedef ucontext_t coro_t;
static ucontext_t main_ctx;
static ucontext_t ctx[COROUTINES];
#define SUSPEND(self) swapcontext(self, &main_ctx)
static void resume(int i)
{
	swapcontext(&main_ctx, &ctx[i]);
}
#endif

static NOINLINE void suspend_here(coro_t *self, uint64_t seed)
{
	volatile uint64_t words[WORDS]; /* on the stack walked, between the frames */
	for (int i = 0; i < WORDS; i++)
		words[i] = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	errno = SENTINEL;
	SUSPEND(self);
	changed_errno += errno != SENTINEL;
	for (int i = 0; i < WORDS; i++)
		changed_words += words[i] != seed * 0x9e3779b97f4a7c15ull + (uint64_t)i;
}

static NOINLINE void first_caller(coro_t *self, uint64_t seed)
{
	suspend_here(self, seed);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static NOINLINE void second_caller(coro_t *self, uint64_t seed)
{
	suspend_here(self, seed);
	__asm__ volatile("" ::: "memory");
}

static void run(coro_t *self, uint64_t seed)
{
	if (use_second)
		second_caller(self, seed);
	else
		first_caller(self, seed);
}

static char stacks[COROUTINES][STACK_SIZE];

#ifdef STACK_MEMO_FCONTEXT
static void entry(transfer_t t)
{
	main_ctx = t.fctx;
	int self = (int)((fcontext_t *)t.data - ctx);
	run(&self, (uint64_t)self);
	jump_fcontext(main_ctx, NULL); /* its last switch: never resumed again */
}

static void make(int i)
{
	ctx[i] = make_fcontext(stacks[i] + STACK_SIZE, STACK_SIZE, entry);
}
#else
static void entry(unsigned lo, unsigned hi)
{
	ucontext_t *self = (ucontext_t *)(((uintptr_t)hi << 32) | lo);
	run(self, (uint64_t)(self - ctx));
}

static void make(int i)
{
	getcontext(&ctx[i]);
	ctx[i].uc_stack.ss_sp = stacks[i];
	ctx[i].uc_stack.ss_size = STACK_SIZE;
	ctx[i].uc_link = &main_ctx;
	uintptr_t self = (uintptr_t)&ctx[i];
	makecontext(&ctx[i], (void (*)(void))entry, 2, (unsigned)self, (unsigned)(self >> 32));
}
#endif

int main(void)
{
	for (next = 0; next < COROUTINES; next++) {
		make(next);
		use_second = next < COROUTINES / 2 ? (next / GROUP) % 2 : next % 2;
		errno = SENTINEL;
		resume(next);
		changed_errno += errno != SENTINEL;
	}
	for (next = 0; next < COROUTINES; next++) {
		errno = SENTINEL;
		resume(next);
		changed_errno += errno != SENTINEL;
	}
	printf("%d coroutines, stack words changed %ld, errno changed %ld times\n", COROUTINES,
	       changed_words, changed_errno);
	return 0;
}

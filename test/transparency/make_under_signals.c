/* Coroutines made while a timer's signal handler switches coroutines: SIGALRM every 100 us runs a
 * handler that swapcontexts to a helper coroutine and back (as a preemptive user-level thread
 * library does), while the program makes 20,000 coroutines with makecontext and make_fcontext,
 * runs each to its end, and frees its stack. The tracer makes a coroutine on a stack of its own
 * (the walk stack); a handler that switches while that runs must leave its frames alone.
 * Prints how many coroutines ran and how many handler round trips there were (at least one). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

#include "fcontext_abi.h"

enum { COROUTINES = 20000, STACK = 32 * 1024 };

static ucontext_t main_ctx, co_ctx, handler_ctx, helper_ctx;
static char helper_stack[64 * 1024];
static volatile sig_atomic_t round_trips;
static volatile int ran;

static void helper_body(void)
{
	for (;;)
		swapcontext(&helper_ctx, &handler_ctx);
}

static void on_alarm(int sig)
{
	(void)sig;
	swapcontext(&handler_ctx, &helper_ctx);
	round_trips++;
}

static void u_body(void)
{
	ran++;
}

static void f_body(transfer_t from)
{
	ran++;
	jump_fcontext(from.fctx, NULL);
}

int main(void)
{
	getcontext(&helper_ctx);
	helper_ctx.uc_stack.ss_sp = helper_stack;
	helper_ctx.uc_stack.ss_size = sizeof(helper_stack);
	helper_ctx.uc_link = NULL;
	/* The helper runs inside the handler: the signal stays blocked there, or swapcontext,
	 * which sets the mask saved with the context, would let handlers nest without end. */
	sigaddset(&helper_ctx.uc_sigmask, SIGALRM);
	makecontext(&helper_ctx, helper_body, 0);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 100}, {0, 100}};
	setitimer(ITIMER_REAL, &every, NULL);

	/* Static: they live across getcontext, which may return twice (-Wclobbered). */
	static int next;
	static char *stack;
	for (next = 0; next < COROUTINES; next++) {
		stack = malloc(STACK);
		if (!stack) {
			perror("malloc");
			return 2;
		}
		if (next % 2) {
			fcontext_t f = make_fcontext(stack + STACK, STACK, f_body);
			jump_fcontext(f, NULL);
		} else {
			getcontext(&co_ctx);
			co_ctx.uc_stack.ss_sp = stack;
			co_ctx.uc_stack.ss_size = STACK;
			co_ctx.uc_link = &main_ctx;
			makecontext(&co_ctx, u_body, 0);
			swapcontext(&main_ctx, &co_ctx);
		}
		free(stack);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("ran %d coroutines, handler round trips: %s\n", ran,
	       round_trips > 0 ? "some" : "none");
	return 0;
}

/* setcontext idioms. "loop": getcontext/setcontext on one stack counting to 5. "scheduler": three
 * makecontext coroutines, round-robin, five steps each, that save themselves with getcontext and
 * jump with setcontext (the "volatile flag" idiom), as do the scheduler's own dispatches. */
#include <string.h>

#include "tp_coro.h"

enum { COROS = 3, STEPS = 5 };

static ucontext_t sched_ctx, co_ctx[COROS];
static char co_stack[COROS][64 * 1024];

static void co_body(int id)
{
	for (volatile int step = 0; step < STEPS; step++) {
		printf("coroutine %d step %d\n", id, step);
		volatile int resumed = 0;
		getcontext(&co_ctx[id]);
		if (!resumed) {
			resumed = 1;
			setcontext(&sched_ctx);
		}
	}
	printf("coroutine %d: all steps done\n", id);
	setcontext(&sched_ctx);
}

static void make(int i)
{
	getcontext(&co_ctx[i]);
	co_ctx[i].uc_stack.ss_sp = co_stack[i];
	co_ctx[i].uc_stack.ss_size = sizeof(co_stack[i]);
	co_ctx[i].uc_link = NULL;
	makecontext(&co_ctx[i], (void (*)(void))co_body, 1, i);
}

/* The scheduler's position lives outside its frame: the getcontext in its loop returns twice,
 * and locals of the frame would be the compiler's to clobber in between. */
static volatile int sched_round, sched_next;

static int scheduler(void)
{
	for (int i = 0; i < COROS; i++)
		make(i);
	for (sched_round = 0; sched_round < STEPS; sched_round++) {
		printf("round %d\n", sched_round);
		for (sched_next = 0; sched_next < COROS; sched_next++) {
			volatile int back = 0;
			getcontext(&sched_ctx);
			if (!back) {
				back = 1;
				setcontext(&co_ctx[sched_next]);
			}
		}
	}
	printf("scheduler: %d rounds done, coroutines left suspended\n", STEPS);
	return 0;
}

static int loop(void)
{
	ucontext_t here;
	volatile int n = 0;
	getcontext(&here);
	n++;
	printf("loop: n=%d\n", n);
	if (n < 5)
		setcontext(&here);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "scheduler") == 0)
		return scheduler();
	tp_touch_coroutine();
	return loop();
}

/* Ordinary coroutine work, for the stalled-collector case: three makecontext coroutines pass a
 * token round a pipe for 100 rounds, each write and read a hooked call, then the totals. */
#include <unistd.h>

#include "tp_coro.h"

enum { COROS = 3, ROUNDS = 100 };

static ucontext_t main_ctx, co_ctx[COROS];
static char co_stack[COROS][64 * 1024];
static int pipe_fds[2];
static long moved[COROS];

static void co_body(int id)
{
	for (int r = 0; r < ROUNDS; r++) {
		char c = (char)id;
		if (write(pipe_fds[1], &c, 1) == 1 && read(pipe_fds[0], &c, 1) == 1)
			moved[id]++;
		swapcontext(&co_ctx[id], &main_ctx);
	}
}

/* In a function of its own: a getcontext in main's loop would leave the loop's variables to be
 * clobbered, as far as the compiler can tell. */
static void make(int i)
{
	getcontext(&co_ctx[i]);
	co_ctx[i].uc_stack.ss_sp = co_stack[i];
	co_ctx[i].uc_stack.ss_size = sizeof(co_stack[i]);
	co_ctx[i].uc_link = &main_ctx;
	makecontext(&co_ctx[i], (void (*)(void))co_body, 1, i);
}

int main(void)
{
	if (pipe(pipe_fds) != 0)
		return 2;
	for (int i = 0; i < COROS; i++)
		make(i);
	for (int r = 0; r <= ROUNDS; r++)
		for (int i = 0; i < COROS; i++)
			swapcontext(&main_ctx, &co_ctx[i]);
	for (int i = 0; i < COROS; i++)
		printf("coroutine %d moved %ld bytes\n", i, moved[i]);
	return 0;
}

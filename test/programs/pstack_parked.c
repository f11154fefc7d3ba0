/* A program that stays up with many coroutines parked, for ctp-pstack's tests: N ucontext
 * coroutines each try to read an empty non-blocking pipe (EAGAIN: the preload notes the wait)
 * in park_on_pipe(), called from coro_body(), and switch back to main, which never resumes
 * them. Main then prints "parked N fd F" (F: the pipe's read end) and reads its standard input
 * to the end before it exits 0, so a test decides how long the coroutines stay parked.
 *
 *   pstack_parked [N]   (default 1000) */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

enum { STACK_BYTES = 16 * 1024 };
static ucontext_t main_ctx;
static ucontext_t *ctx;
static long current, count;
static char *stacks;
static int pipe_fds[2];

static void park_on_pipe(long me)
{
	char byte;
	if (read(pipe_fds[0], &byte, 1) < 0) /* EAGAIN: nothing is ever written */
		swapcontext(&ctx[me], &main_ctx);
}

static void coro_body(void)
{
	park_on_pipe(current);
}

int main(int argc, char **argv)
{
	/* Everything live across swapcontext is at file scope: it returns twice. */
	count = argc > 1 ? atol(argv[1]) : 1000;
	ctx = calloc((size_t)count, sizeof(*ctx));
	stacks = malloc((size_t)count * STACK_BYTES);
	if (!ctx || !stacks || pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
		return 1;
	for (current = 0; current < count; current++) {
		getcontext(&ctx[current]);
		ctx[current].uc_stack.ss_sp = stacks + current * STACK_BYTES;
		ctx[current].uc_stack.ss_size = STACK_BYTES;
		makecontext(&ctx[current], coro_body, 0);
		swapcontext(&main_ctx, &ctx[current]);
	}
	printf("parked %ld fd %d\n", count, pipe_fds[0]);
	fflush(stdout);
	char buf[256];
	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		continue;
	return 0;
}

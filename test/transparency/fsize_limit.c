/* A file size limit (ulimit -f): the program writes a file within it and makes and switches
 * enough coroutines that a tracer's shared memory would grow past it. A memfd counts against
 * RLIMIT_FSIZE, and growing one past it sends SIGXFSZ, which kills by default: the tracer must
 * stay within the limit (and trace less), never make the program die of it. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "tp_coro.h"

enum { COROS = 3000, SWITCHES = 200000, STACK = 16 * 1024, FILE_BYTES = 512 * 1024 };

static ucontext_t main_ctx, ctx[COROS];
static char *stacks;

static void body(void)
{
	for (;;)
		swapcontext(&ctx[0], &main_ctx);
}

/* In a function of its own: a getcontext in main's loop would leave main's locals to be
 * clobbered, as far as the compiler can tell. */
static void make(int i)
{
	getcontext(&ctx[i]);
	ctx[i].uc_stack.ss_sp = stacks + (size_t)i * STACK;
	ctx[i].uc_stack.ss_size = STACK;
	ctx[i].uc_link = &main_ctx;
	makecontext(&ctx[i], body, 0);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	static char block[4096];
	memset(block, 'x', sizeof(block));
	long written = 0;
	for (int i = 0; fd >= 0 && i < FILE_BYTES / (int)sizeof(block); i++)
		written += write(fd, block, sizeof(block));
	close(fd);
	printf("wrote %ld bytes\n", written);

	stacks = malloc((size_t)COROS * STACK);
	if (!stacks)
		return 2;
	for (int i = 0; i < COROS; i++)
		make(i);
	/* One coroutine switched many times: its thread's ring fills and would grow. */
	for (int i = 0; i < SWITCHES; i++)
		swapcontext(&main_ctx, &ctx[0]);
	printf("made %d coroutines, %d switches\n", COROS, SWITCHES);
	return 0;
}

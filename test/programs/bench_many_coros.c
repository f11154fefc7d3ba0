/* Benchmark: N live ucontext coroutines (each entered once and left suspended). Prints the size
 * of the process's ctp segment (the memfd named ctp-segment), so that shared memory per live
 * coroutine can be computed: `coroutines=N segment_bytes=B` (B = 0 when untraced). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

enum { STACK_BYTES = 16 * 1024 };
static ucontext_t main_ctx;
static ucontext_t *ctx;
static long current, count;
static char *stacks;

static void park(void)
{
	swapcontext(&ctx[current], &main_ctx); /* never resumed again */
}

static long segment_bytes(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long size = 0;
	while (d && (e = readdir(d))) {
		char link[300], target[256];
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		struct stat st;
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strstr(target, "memfd:ctp-segment") && stat(link, &st) == 0)
			size = (long)st.st_size;
	}
	if (d)
		closedir(d);
	return size;
}

int main(int argc, char **argv)
{
	/* Everything live across swapcontext is at file scope: it returns twice. */
	count = argc > 1 ? atol(argv[1]) : 100000;
	ctx = calloc((size_t)count, sizeof(*ctx));
	stacks = malloc((size_t)count * STACK_BYTES);
	if (!ctx || !stacks)
		return 1;
	for (current = 0; current < count; current++) {
		getcontext(&ctx[current]);
		ctx[current].uc_stack.ss_sp = stacks + current * STACK_BYTES;
		ctx[current].uc_stack.ss_size = STACK_BYTES;
		makecontext(&ctx[current], park, 0);
		swapcontext(&main_ctx, &ctx[current]);
	}
	printf("coroutines=%ld segment_bytes=%ld\n", count, segment_bytes());
	return 0;
}

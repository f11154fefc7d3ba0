/* The cost of the I/O hooks when there is nothing to record: N (default 1 M) successful
 * one-byte non-blocking reads from a pipe, refilled by a write whenever it runs dry. One read
 * that would block comes first, so that the tracer's fd table exists and the hook takes its
 * real fast path. Prints the best ns per read of ten slices, beside the same reads made as raw
 * syscalls (which no hook sees). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { FILL = 4096 };

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* n one-byte reads, through the libc function (hooked when traced) or the raw syscall. */
static double bench(int p[2], long n, bool raw)
{
	static char buf[FILL];
	char c;
	long left = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (left == 0) {
			if (write(p[1], buf, FILL) != FILL)
				exit(1);
			left = FILL;
		}
		long got = raw ? syscall(SYS_read, p[0], &c, 1) : read(p[0], &c, 1);
		if (got != 1)
			exit(1);
		left--;
	}
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int p[2];
	if (pipe2(p, O_NONBLOCK) != 0)
		return 1;
	char c;
	if (read(p[0], &c, 1) != -1) /* would block: the table is made */
		return 1;
	/* Alternate in slices, so that a busy machine slows both alike; keep the best slice. */
	double best_read = 1e18, best_raw = 1e18;
	for (int round = 0; round < 10; round++) {
		double a = bench(p, n / 10, false), b = bench(p, n / 10, true);
		best_read = a < best_read ? a : best_read;
		best_raw = b < best_raw ? b : best_raw;
	}
	printf("%.1f ns per read, %.1f ns per raw read syscall, difference %.1f ns\n", best_read,
	       best_raw, best_read - best_raw);
	return 0;
}

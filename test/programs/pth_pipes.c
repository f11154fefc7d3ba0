/* GNU Pth threads (makecontext/swapcontext under the hood, a select() scheduler) talking over
 * pipes: two producer/consumer pairs pass numbered messages with pth_write/pth_read, and one
 * more thread waits forever in pth_read on a pipe nobody writes to. main joins the pairs, prints
 * what the consumers summed and the forever thread's fd, and exits with that thread still
 * blocked.
 * Usage: pth_pipes [MESSAGES]   (per pair, default 20000: more than a pipe holds) */
#include <pth.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct pair {
	int fds[2];
	int messages;
	long sum;
};

static void *producer(void *arg)
{
	struct pair *p = arg;
	for (int i = 1; i <= p->messages; i++)
		if (pth_write(p->fds[1], &i, sizeof(i)) != sizeof(i))
			abort();
	return NULL;
}

static void *consumer(void *arg)
{
	struct pair *p = arg;
	for (int i = 0; i < p->messages; i++) {
		int v;
		if (pth_read(p->fds[0], &v, sizeof(v)) != sizeof(v))
			abort();
		p->sum += v;
	}
	return NULL;
}

/* Blocks in pth_read on a pipe whose write end stays open and silent. */
static void *forever(void *arg)
{
	int fd = *(int *)arg;
	char c;
	pth_read(fd, &c, 1);
	abort(); /* nothing is ever written */
}

static pth_t spawn(const char *name, void *(*fn)(void *), void *arg)
{
	pth_attr_t attr = pth_attr_new();
	pth_attr_set(attr, PTH_ATTR_NAME, name);
	pth_attr_set(attr, PTH_ATTR_JOINABLE, TRUE);
	pth_t t = pth_spawn(attr, fn, arg);
	pth_attr_destroy(attr);
	if (!t)
		abort();
	return t;
}

int main(int argc, char **argv)
{
	int messages = argc > 1 ? atoi(argv[1]) : 20000;
	if (!pth_init())
		return 1;
	struct pair pairs[2];
	int silent[2];
	if (pipe(silent) != 0)
		return 1;
	pth_t threads[4];
	for (int k = 0; k < 2; k++) {
		pairs[k] = (struct pair){.messages = messages};
		if (pipe(pairs[k].fds) != 0)
			return 1;
		threads[2 * k] = spawn("consumer", consumer, &pairs[k]);
		threads[2 * k + 1] = spawn("producer", producer, &pairs[k]);
	}
	spawn("forever", forever, &silent[0]);
	for (int k = 0; k < 4; k++)
		if (!pth_join(threads[k], NULL))
			return 1;
	printf("sums %ld %ld\nsilent fd %d\n", pairs[0].sum, pairs[1].sum, silent[0]);
	fflush(stdout);
	/* exit, not pth_exit: the forever thread stays blocked to the end. */
	return 0;
}

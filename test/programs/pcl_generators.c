/* libpcl (Portable Coroutine Library, ucontext underneath) generators: main co_calls each of
 * four generators until it returns; generator i hands back VALUES values with co_resume, then
 * returns, which ends it (PCL deletes it on a helper context of its own). main counts the
 * switches it made itself and prints them with what it received.
 * Usage: pcl_generators [VALUES]   (default 250) */
#include <pcl.h>
#include <stdio.h>
#include <stdlib.h>

enum { GENERATORS = 4 };

struct gen {
	int index, values;
	long value; /* what the last resume handed back */
	int done;
};

static void generate(void *arg)
{
	struct gen *g = arg;
	for (int j = 0; j < g->values; j++) {
		g->value = g->index * 100000L + j;
		co_resume();
	}
	g->done = 1;
}

int main(int argc, char **argv)
{
	int values = argc > 1 ? atoi(argv[1]) : 250;
	if (co_thread_init() != 0)
		return 1;
	struct gen gens[GENERATORS];
	coroutine_t coros[GENERATORS];
	for (int i = 0; i < GENERATORS; i++) {
		gens[i] = (struct gen){.index = i, .values = values};
		coros[i] = co_create(generate, &gens[i], NULL, 64 * 1024);
		if (!coros[i])
			return 1;
	}
	long calls = 0, sum = 0;
	for (int live = GENERATORS; live > 0;) {
		live = 0;
		for (int i = 0; i < GENERATORS; i++) {
			if (gens[i].done)
				continue;
			co_call(coros[i]);
			calls++;
			if (!gens[i].done) {
				sum += gens[i].value;
				live++;
			}
		}
	}
	printf("calls %ld resumes %ld sum %ld\n", calls, calls - GENERATORS, sum);
	co_thread_cleanup();
	return 0;
}

/* libdw needs a deep stack: dwarf_getsrclines over the line table of even a small program's
 * unit took more than 128 KiB, and ctp-collector died of SIGSEGV under `ulimit -s 128`, the
 * trace lost. A program's limits are its collector's too (ctp-run and the preload start it
 * under them), and a user who lowers `ulimit -s` so that a program can start many threads
 * lowers it for the tools run from that shell. The soft limit is not raised instead: under
 * `ulimit -s`, which sets the hard limit too, it cannot be, and the programs a tool starts would
 * inherit it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "ctp/deep_stack.h"

enum { DEEP_STACK_BYTES = 8 << 20 };

struct deep_call {
	int (*fn)(int argc, char **argv);
	int argc;
	char **argv;
	sigset_t mask; /* the caller's signal mask, fn's thread's own */
	int rc;
};

static void *run_deep(void *arg)
{
	struct deep_call *c = arg;
	pthread_sigmask(SIG_SETMASK, &c->mask, NULL);
	c->rc = c->fn(c->argc, c->argv);
	return NULL;
}

int ctp_main_on_deep_stack(int (*fn)(int argc, char **argv), int argc, char **argv)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= DEEP_STACK_BYTES)
		return fn(argc, argv);
	struct deep_call c = {.fn = fn, .argc = argc, .argv = argv};
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &c.mask);
	pthread_attr_t attr;
	pthread_t thread;
	bool started = pthread_attr_init(&attr) == 0;
	started = started && pthread_attr_setstacksize(&attr, DEEP_STACK_BYTES) == 0 &&
		  pthread_create(&thread, &attr, run_deep, &c) == 0;
	pthread_attr_destroy(&attr);
	if (started)
		pthread_join(thread, NULL);
	pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
	/* No thread to be had (no memory for its stack): as before, on the caller's. */
	return started ? c.rc : fn(argc, argv);
}

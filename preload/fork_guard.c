/* See fork_guard.h. A guard is one count in `inside`; a fork raises `forking` and waits for the
 * count to drop to what the forking thread itself holds (a program may fork from a signal
 * handler that interrupted one of our walks on that very thread). Entering raises the count
 * first and looks at `forking` after, and the fork raises `forking` first and looks at the count
 * after: with both orders sequentially consistent, one of them always sees the other, so no
 * guard is left under way at the fork. Guards are rare (a walk where a coroutine first waits, a
 * module scan where one starts), so one shared counter is cheap enough. */
#include "preload/fork_guard.h"

#include <sched.h>

static int inside;  /* guards under way, all threads */
static int forking; /* a fork is between its prepare and parent/child handlers */
static __thread int mine __attribute__((tls_model("initial-exec"))); /* this thread's guards */

bool ctp_fork_guard_try_enter(void)
{
	__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&forking, __ATOMIC_SEQ_CST), 0)) {
		__atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	mine++;
	return true;
}

void ctp_fork_guard_enter(void)
{
	/* A thread already inside (a hook in a signal handler that interrupted a guard) goes on:
	 * a fork waits for that outer guard anyway, and waiting here would wait for the fork. */
	if (mine > 0) {
		__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST);
		mine++;
		return;
	}
	while (!ctp_fork_guard_try_enter())
		sched_yield();
}

void ctp_fork_guard_leave(void)
{
	mine--;
	__atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
}

int ctp_fork_guard_held(void)
{
	return mine;
}

void ctp_fork_guard_prepare(void)
{
	__atomic_store_n(&forking, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) > mine)
		sched_yield();
}

void ctp_fork_guard_parent(void)
{
	__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}

void ctp_fork_guard_child(void)
{
	/* Only this thread goes on: only its own guards are still under way. */
	__atomic_store_n(&inside, mine, __ATOMIC_SEQ_CST);
	__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
}

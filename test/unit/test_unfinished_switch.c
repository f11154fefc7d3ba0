/* The collector's rule for a thread stopped inside a switch hook (collector/unfinished_switch.h):
 * over stations made up the way a dead process leaves them, exactly the coroutine the thread was
 * leaving counts as running, and nothing else is changed: threads with a running coroutine, ended
 * threads, a thread stopped after a coroutine's end, a coroutine made and never run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "collector/unfinished_switch.h"
#include "ctp/segment.h"

static struct ctp_station_snapshot station(uint32_t kind, uint32_t state, uint32_t tid,
					   uint64_t last_switch)
{
	return (struct ctp_station_snapshot){
		.kind = kind, .state = state, .tid = tid, .last_switch = last_switch, .coro = 1};
}

enum { NSTATIONS = 6 };

/* Notes every station, then returns the indices the rule names running, as a bit set. */
static unsigned running_set(const struct ctp_station_snapshot *s, int n)
{
	struct ctp_unfinished_switches u;
	ctp_unfinished_init(&u);
	for (int i = 0; i < n; i++)
		ctp_unfinished_note(&u, (uint32_t)i, &s[i]);
	unsigned set = 0;
	for (int i = 0; i < n; i++)
		if (ctp_unfinished_was_running(&u, (uint32_t)i, &s[i]))
			set |= 1u << i;
	ctp_unfinished_free(&u);
	return set;
}

static void stopped_between_the_updates(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[NSTATIONS] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 300), /* was leaving */
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 200), /* was to resume */
		station(CTP_KIND_UCONTEXT, CTP_STATE_CREATED, 10, 0),
		station(CTP_KIND_THREAD, CTP_STATE_RUNNING, 11, 50), /* another thread, whole */
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 11, 400),
	};
	assert_int_equal(running_set(s, NSTATIONS), 1u << 1);
}

static void whole_threads_are_left_alone(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_RUNNING, 10, 300),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 300),
	};
	assert_int_equal(running_set(s, 3), 0);
}

/* A thread that ended leaves coroutines suspended with its tid and nothing running: they wait
 * for another thread, which is no unfinished switch. */
static void ended_threads_are_left_alone(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_EXITED, 12, 500),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 12, 600),
	};
	assert_int_equal(running_set(s, 2), 0);
}

/* Stopped after a coroutine's end and before the next resume: which one comes next is not
 * known, and an earlier suspended one must not be taken for it. */
static void stopped_after_an_end(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_EXITED, 10, 300),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 200),
	};
	assert_int_equal(running_set(s, 3), 0);
}

/* Many threads, for the table's growth: each stopped in a switch, each gets its own. */
static void many_threads(void **state)
{
	(void)state;
	enum { THREADS = 500 };
	static struct ctp_station_snapshot s[2 * THREADS];
	for (uint32_t t = 0; t < THREADS; t++) {
		s[2 * t] = station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 1000 + t, 10 + t);
		s[2 * t + 1] = station(CTP_KIND_FCONTEXT, CTP_STATE_SUSPENDED, 1000 + t, 20 + t);
	}
	struct ctp_unfinished_switches u;
	ctp_unfinished_init(&u);
	for (uint32_t i = 0; i < 2 * THREADS; i++)
		ctp_unfinished_note(&u, i, &s[i]);
	for (uint32_t i = 0; i < 2 * THREADS; i++)
		assert_int_equal(ctp_unfinished_was_running(&u, i, &s[i]), i % 2 == 1);
	ctp_unfinished_free(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stopped_between_the_updates),
		cmocka_unit_test(whole_threads_are_left_alone),
		cmocka_unit_test(ended_threads_are_left_alone),
		cmocka_unit_test(stopped_after_an_end),
		cmocka_unit_test(many_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The rule for a thread stopped inside a switch hook (ctp/unfinished_switch.h), which the
 * collector's final states and ctp-pstack's cores share:
 * over stations made up the way a dead process leaves them, exactly the coroutine the thread was
 * leaving (suspended, or left by setcontext), or the one an end named next, counts as running, on
 * that thread; nothing else is changed: threads with a running coroutine, ended threads, an end
 * that named nothing, a coroutine made and never run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ctp/unfinished_switch.h"
#include "ctp/segment.h"

static struct ctp_station_snapshot station(uint32_t kind, uint32_t state, uint32_t tid,
					   uint64_t last_switch)
{
	return (struct ctp_station_snapshot){
		.kind = kind, .state = state, .tid = tid, .last_switch = last_switch, .coro = 1};
}

/* An exited station whose end named station `next` as resumed next. */
static struct ctp_station_snapshot ended(uint32_t tid, uint64_t last_switch, uint32_t next)
{
	struct ctp_station_snapshot s =
		station(CTP_KIND_UCONTEXT, CTP_STATE_EXITED, tid, last_switch);
	s.ended_to = next + 1;
	return s;
}

enum { NSTATIONS = 6 };

/* Notes every station, then returns the indices the rule names running, as a bit set; the tid
 * each runs on goes to tids[]. */
static unsigned running_set_on(const struct ctp_station_snapshot *s, int n, uint32_t *tids)
{
	struct ctp_unfinished_switches u;
	ctp_unfinished_init(&u);
	for (int i = 0; i < n; i++)
		ctp_unfinished_note(&u, (uint32_t)i, &s[i]);
	ctp_unfinished_settle(&u);
	unsigned set = 0;
	for (int i = 0; i < n; i++) {
		uint32_t tid = 0;
		if (ctp_unfinished_was_running(&u, (uint32_t)i, &s[i], &tid))
			set |= 1u << i;
		if (tids)
			tids[i] = tid;
	}
	ctp_unfinished_free(&u);
	return set;
}

static unsigned running_set(const struct ctp_station_snapshot *s, int n)
{
	return running_set_on(s, n, NULL);
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

static void left_by_setcontext(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_LEFT, 10, 300),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 200),
	};
	assert_int_equal(running_set(s, 3), 1u << 1);
}

/* Stopped after a coroutine's end and before the resume its end named: that one ran, on the
 * thread that was stopped, though it last ran on another (or never ran); an earlier suspended
 * one of the thread is not taken for it. */
static void stopped_after_an_end(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		ended(10, 300, 3),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 200),
		station(CTP_KIND_FCONTEXT, CTP_STATE_SUSPENDED, 11, 250), /* named next */
		station(CTP_KIND_THREAD, CTP_STATE_RUNNING, 11, 50),
		ended(12, 400, 6),
		station(CTP_KIND_FCONTEXT, CTP_STATE_CREATED, 10, 0), /* named next, never run */
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 12, 60),
	};
	uint32_t tids[8];
	assert_int_equal(running_set_on(s, 8, tids), 1u << 3 | 1u << 6);
	assert_int_equal(tids[3], 10);
	assert_int_equal(tids[6], 12);
}

/* An end that named nothing (the thread's last coroutine ended on its way out), or a thread
 * whose end was followed by the resume it named: nothing to add. */
static void ends_that_finished_or_named_nothing(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_EXITED, 10, 300),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 200),
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 11, 100),
		ended(11, 300, 5),
		station(CTP_KIND_UCONTEXT, CTP_STATE_RUNNING, 11, 300),
	};
	assert_int_equal(running_set(s, 6), 0);
}

/* A thread stopped between the first two stores of a suspend (the state, then the time), or of
 * an end: the station it was writing is torn, and still holds the time it was resumed at, the
 * time the station that resumed it suspended at. The torn one is the last the thread touched,
 * though the other's index comes after it. */
static void torn_mid_suspend_or_end(void **state)
{
	(void)state;
	struct ctp_station_snapshot s[] = {
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 10, 100),
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 300), /* torn: was leaving */
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 10, 300), /* resumed it */
		station(CTP_KIND_THREAD, CTP_STATE_SUSPENDED, 11, 100),
		ended(11, 300, 6),					  /* torn: was ending */
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 11, 300), /* resumed it */
		station(CTP_KIND_UCONTEXT, CTP_STATE_SUSPENDED, 11, 200), /* named next */
	};
	s[1].torn = true;
	s[4].torn = true;
	uint32_t tids[7];
	assert_int_equal(running_set_on(s, 7, tids), 1u << 1 | 1u << 6);
	assert_int_equal(tids[1], 10);
	assert_int_equal(tids[6], 11);
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
	ctp_unfinished_settle(&u);
	for (uint32_t i = 0; i < 2 * THREADS; i++) {
		uint32_t tid = 0;
		assert_int_equal(ctp_unfinished_was_running(&u, i, &s[i], &tid), i % 2 == 1);
		assert_int_equal(tid, i % 2 == 1 ? 1000 + i / 2 : 0);
	}
	ctp_unfinished_free(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stopped_between_the_updates),
		cmocka_unit_test(whole_threads_are_left_alone),
		cmocka_unit_test(ended_threads_are_left_alone),
		cmocka_unit_test(left_by_setcontext),
		cmocka_unit_test(stopped_after_an_end),
		cmocka_unit_test(ends_that_finished_or_named_nothing),
		cmocka_unit_test(torn_mid_suspend_or_end),
		cmocka_unit_test(many_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

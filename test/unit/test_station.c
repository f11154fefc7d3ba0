/* The station seqlock on one thread: a finished update reads back whole, frames are clamped to
 * the depth the reader gives, and a station whose writer died mid-update (seq left odd) is
 * reported as possibly torn, promptly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ctp/clock.h"
#include "station_fixture.h"

static void finished_update_reads_back_whole(void **state)
{
	(void)state;
	struct ctp_station *s = test_station_new(16);
	struct ctp_station_snapshot snap;
	for (uint64_t v = 1; v <= 3; v++) {
		test_station_set_all(s, 16, v * 0x0101010101010101ull);
		assert_int_equal(s->seq, 2 * v);
		assert_true(ctp_station_read(s, 16, &snap));
		assert_true(test_snapshot_is_whole(&snap, 16));
		assert_int_equal(snap.coro, v * 0x0101010101010101ull);
	}
	free(s);
}

/* stack_len is written by the traced process: the reader never copies more frames than the
 * depth it was given, nor more than a snapshot holds. */
static void frames_are_clamped_to_depth(void **state)
{
	(void)state;
	struct ctp_station *s = test_station_new(CTP_MAX_STACK_DEPTH);
	struct ctp_station_snapshot snap;
	test_station_set_all(s, CTP_MAX_STACK_DEPTH, 5);

	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->stack_len, 1000);
	ctp_station_write_end(s, seq);
	assert_true(ctp_station_read(s, 4, &snap));
	assert_int_equal(snap.stack_len, 4);
	assert_true(ctp_station_read(s, 1000, &snap));
	assert_int_equal(snap.stack_len, CTP_MAX_STACK_DEPTH);
	assert_true(ctp_station_read(s, 0, &snap));
	assert_int_equal(snap.stack_len, 0);
	free(s);
}

/* A writer that crashed between write_begin and write_end leaves seq odd forever: the reader
 * must give up after a bounded number of tries, say so, and keep its last copy. */
static void odd_seq_fails_within_bounded_time(void **state)
{
	(void)state;
	struct ctp_station *s = test_station_new(16);
	struct ctp_station_snapshot snap;
	test_station_set_all(s, 16, 42);
	(void)ctp_station_write_begin(s); /* ... and the writer dies here */
	CTP_STORE_RELAXED(&s->coro, 43);
	assert_int_equal(s->seq & 1, 1);

	uint64_t t0 = ctp_monotonic_ns();
	bool ok = ctp_station_read(s, 16, &snap);
	uint64_t elapsed = ctp_monotonic_ns() - t0;
	assert_false(ok);
	assert_true(elapsed < 100000000ull); /* 100 ms: generous even under a sanitizer */
	assert_int_equal(snap.coro, 43);     /* the last copy, as it was */
	assert_int_equal(snap.entry, 42);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finished_update_reads_back_whole),
		cmocka_unit_test(frames_are_clamped_to_depth),
		cmocka_unit_test(odd_seq_fails_within_bounded_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

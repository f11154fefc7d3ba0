/* The TSC model that turns raw TSC readings into CLOCK_MONOTONIC nanoseconds. After a 20 ms
 * calibration, a fresh reading must convert to within 1 ms of CLOCK_MONOTONIC read at the same
 * moment: a wrong rate (even 5% off) or a wrong anchor fails that, while the model's real error
 * (tens of ns of sampling error spread over 20 ms) stays far below it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "ctp/clock.h"

enum { CALIBRATE_MS = 20, TOLERANCE_NS = 1000000 };

/* A (tsc, ns) pair read close together: the TSC on both sides of clock_gettime, retried while
 * a preemption pulled them apart. */
static void fresh_pair(const struct ctp_tsc_model *m, uint64_t *tsc, uint64_t *ns)
{
	for (int i = 0; i < 100; i++) {
		uint64_t t0 = ctp_tsc();
		*ns = ctp_monotonic_ns();
		uint64_t t1 = ctp_tsc();
		*tsc = t0 + (t1 - t0) / 2;
		if ((double)(t1 - t0) * m->ns_per_tick < 20000.0)
			return;
	}
}

static int64_t model_error_ns(const struct ctp_tsc_model *m)
{
	uint64_t tsc, ns;
	fresh_pair(m, &tsc, &ns);
	return (int64_t)(ctp_tsc_model_ns(m, tsc) - ns);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

static void converts_to_monotonic_within_a_millisecond(void **state)
{
	(void)state;
	struct ctp_tsc_model m;
	uint64_t t0 = ctp_monotonic_ns();
	ctp_tsc_model_init(&m, CALIBRATE_MS);
	assert_true(ctp_monotonic_ns() - t0 >= CALIBRATE_MS * 1000000ull);
	/* A plausible rate: between 100 MHz and 10 GHz. */
	assert_true(m.ns_per_tick > 0.1 && m.ns_per_tick < 10.0);

	int64_t err = model_error_ns(&m);
	print_message("error right after calibration: %lld ns\n", (long long)err);
	assert_true(err > -TOLERANCE_NS && err < TOLERANCE_NS);

	/* 50 ms on: 2.5 times the calibration span, so a rate error shows up larger. */
	sleep_ms(50);
	err = model_error_ns(&m);
	print_message("error 50 ms later: %lld ns\n", (long long)err);
	assert_true(err > -TOLERANCE_NS && err < TOLERANCE_NS);

	/* Refining the rate keeps it within the bound. */
	ctp_tsc_model_update(&m);
	err = model_error_ns(&m);
	assert_true(err > -TOLERANCE_NS && err < TOLERANCE_NS);
}

/* The anchor converts to itself, and a reading taken before the anchor (a record written just
 * before the model was made) converts to an earlier time, not to a huge one. */
static void readings_around_the_anchor(void **state)
{
	(void)state;
	uint64_t early = ctp_tsc();
	struct ctp_tsc_model m;
	ctp_tsc_model_init(&m, CALIBRATE_MS);
	assert_int_equal(ctp_tsc_model_ns(&m, m.tsc0), m.ns0);
	uint64_t early_ns = ctp_tsc_model_ns(&m, early);
	assert_true(early_ns <= m.ns0);
	assert_true(m.ns0 - early_ns < 10000000ull); /* taken moments before */
	uint64_t ticks_per_ms = (uint64_t)(1e6 / m.ns_per_tick);
	int64_t back = (int64_t)(m.ns0 - ctp_tsc_model_ns(&m, m.tsc0 - ticks_per_ms));
	assert_true(back > 999000 && back < 1001000);
}

int main(void)
{
	if (!ctp_tsc_is_invariant()) {
		/* The preload uses CLOCK_MONOTONIC there: nothing to convert. Said to ctest as a
		 * skip (SKIP_RETURN_CODE), not counted as a pass. */
		print_message("no invariant TSC on this machine: the TSC model is not used\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converts_to_monotonic_within_a_millisecond),
		cmocka_unit_test(readings_around_the_anchor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

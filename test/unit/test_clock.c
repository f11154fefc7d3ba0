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

static int64_t model_error_ns(struct ctp_tsc_model *m)
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

/* The collector converts only TSC readings, which the preload takes only from an invariant TSC:
 * the real-clock tests need one, and say so when the machine has none. */
static void require_invariant_tsc(void)
{
	if (!ctp_tsc_is_invariant())
		print_message("this test reads the real TSC and needs an invariant one "
			      "(CPUID 0x80000007 EDX bit 8); this machine has none\n");
	assert_true(ctp_tsc_is_invariant());
}

static void converts_to_monotonic_within_a_millisecond(void **state)
{
	(void)state;
	require_invariant_tsc();
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

/* The collector's way: the anchor at its start, the rate when it first converts. Time that
 * passed in between (a sleep here, the program starting there) is calibration time, not
 * spent again: finishing a model begun 30 ms ago waits for nothing, and its rate is as good. */
static void begun_then_finished_later(void **state)
{
	(void)state;
	require_invariant_tsc();
	struct ctp_tsc_model m;
	ctp_tsc_model_begin(&m);
	assert_false(ctp_tsc_model_has_rate(&m));
	sleep_ms(30);
	uint64_t t0 = ctp_monotonic_ns();
	ctp_tsc_model_finish(&m, CALIBRATE_MS);
	uint64_t waited = ctp_monotonic_ns() - t0;
	print_message("finishing took %llu ns\n", (unsigned long long)waited);
	assert_true(waited < 1000000ull);
	assert_true(ctp_tsc_model_has_rate(&m));
	int64_t err = model_error_ns(&m);
	assert_true(err > -TOLERANCE_NS && err < TOLERANCE_NS);
	/* A model finished early waits out the rest of its span. */
	ctp_tsc_model_begin(&m);
	t0 = ctp_monotonic_ns();
	ctp_tsc_model_finish(&m, 2);
	assert_true(ctp_monotonic_ns() - t0 >= 1000000ull);
	err = model_error_ns(&m);
	assert_true(err > -TOLERANCE_NS && err < TOLERANCE_NS);
}

/* The anchor converts to itself, and a reading taken before the anchor (a record written just
 * before the model was made) converts to an earlier time, not to a huge one. */
static void readings_around_the_anchor(void **state)
{
	(void)state;
	require_invariant_tsc();
	uint64_t early = ctp_tsc();
	struct ctp_tsc_model m;
	ctp_tsc_model_init(&m, CALIBRATE_MS);
	assert_int_equal(ctp_tsc_model_ns(&m, m.cal_tsc), m.cal_ns);
	uint64_t early_ns = ctp_tsc_model_ns(&m, early);
	assert_true(early_ns <= m.cal_ns);
	assert_true(m.cal_ns - early_ns < 10000000ull); /* taken moments before */
	uint64_t ticks_per_ms = (uint64_t)(1e6 / m.ns_per_tick);
	int64_t back = (int64_t)(m.cal_ns - ctp_tsc_model_ns(&m, m.cal_tsc - ticks_per_ms));
	assert_true(back > 999000 && back < 1001000);
}

/* Hours of a TSC that runs 50 ppm fast against CLOCK_MONOTONIC (NTP slews the latter), refined
 * every 100 ms as the collector does: conversions never go back in time, however the rate changes
 * between updates, readings converted late (with a newer piece at hand) convert as they did on
 * time, and the error stays bounded. Synthetic pairs, so the test sees hours in milliseconds. */
static void monotonic_over_hours_of_drift(void **state)
{
	(void)state;
	struct ctp_tsc_model m;
	ctp_tsc_model_init(&m, 1);
	const double ticks_per_ns = 1.0 / m.ns_per_tick;
	uint64_t tsc = m.cal_tsc, ns0 = m.cal_ns;
	uint64_t prev = 0, worst_gap = 0;
	uint64_t late_tsc = 0, late_ns_on_time = 0;
	for (uint64_t step = 1; step <= 3 * 3600 * 10; step++) { /* 3 h of 100 ms ticks */
		uint64_t ns = ns0 + step * 100000000ull;
		/* The true rate drifts: 50 ppm fast, wobbling by +-20 ppm every minute. */
		double ppm = 50.0 + 20.0 * ((step / 600) % 2 ? 1.0 : -1.0);
		tsc += (uint64_t)(100000000.0 * ticks_per_ns * (1 + ppm * 1e-6));
		/* Readings between updates, converted when read. */
		for (int k = 0; k < 4; k++) {
			uint64_t t = tsc - (uint64_t)((3 - k) * 20000000.0 * ticks_per_ns);
			uint64_t c = ctp_tsc_model_ns(&m, t);
			assert_true(c >= prev);
			prev = c;
		}
		if (step == 5000) {
			late_tsc = tsc - (uint64_t)(10000000.0 * ticks_per_ns);
			late_ns_on_time = ctp_tsc_model_ns(&m, late_tsc);
		}
		if (step == 5010) /* one second later, ten pieces on */
			assert_int_equal(ctp_tsc_model_ns(&m, late_tsc), late_ns_on_time);
		ctp_tsc_model_update_with(&m, tsc, ns);
		uint64_t c = ctp_tsc_model_ns(&m, tsc);
		uint64_t gap = c > ns ? c - ns : ns - c;
		if (step > 100 && gap > worst_gap)
			worst_gap = gap;
	}
	print_message("largest gap to the reference after the first 10 s: %llu ns\n",
		      (unsigned long long)worst_gap);
	assert_true(worst_gap < 1000000); /* under a millisecond, over three hours */
}

/* The piece a conversion starts from is only a guess (the last one used): readings in any order,
 * in every piece, before the oldest and after the newest, convert exactly as each would alone,
 * also after the ring of pieces has wrapped. */
static void any_order_converts_alike(void **state)
{
	(void)state;
	struct ctp_tsc_model m;
	ctp_tsc_model_init(&m, 1);
	uint64_t tsc = m.cal_tsc, ns = m.cal_ns;
	for (int step = 0; step < CTP_TSC_PIECES + 10; step++) {
		tsc += 300000000ull;
		ns += 100000000ull + (uint64_t)(step % 7) * 1000;
		ctp_tsc_model_update_with(&m, tsc, ns);
	}
	assert_int_equal(m.count, CTP_TSC_PIECES);
	enum { N = 1009 }; /* prime: the stride below visits every reading once */
	uint64_t first = m.piece[m.first].tsc0 - 5000000ull, span = tsc + 5000000ull - first;
	uint64_t alone[N];
	for (int i = 0; i < N; i++) {
		struct ctp_tsc_model fresh = m;
		fresh.hint_span = 0; /* no guess: the search from the newest */
		alone[i] = ctp_tsc_model_ns(&fresh, first + span / N * (uint64_t)i);
	}
	for (int j = 0, i = 0; j < N; j++, i = (i + 389) % N)
		assert_int_equal(ctp_tsc_model_ns(&m, first + span / N * (uint64_t)i), alone[i]);
}

int main(void)
{
	/* No skip: the synthetic test needs no particular TSC; the two that read the real clocks
	 * need an invariant one and fail, saying so, on a machine without it. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converts_to_monotonic_within_a_millisecond),
		cmocka_unit_test(readings_around_the_anchor),
		cmocka_unit_test(begun_then_finished_later),
		cmocka_unit_test(monotonic_over_hours_of_drift),
		cmocka_unit_test(any_order_converts_alike),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

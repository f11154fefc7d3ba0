/* When the converter holds back (collector/convert_pacing.h): a window of wanting a CPU that was
 * a quarter or more waiting starts a hold, and so does one where the run queues found the CPUs
 * taken and the program's threads waited (the run queues alone, where those waits are unknown);
 * a hold ends when a probe finds a CPU free, when it has lasted its longest, when a quarter of
 * the spool waits (counted for the summary, and then none starts again until the spool is
 * emptied), or when the run ends; probes come less often while the CPUs stay busy; a hold
 * starts only when little waits; and nothing holds where it is turned off or the scheduler's totals
 * cannot be read. The thread's own totals are read on the real /proc file too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/convert_pacing.h"

#define MS 1000000ull
#define SPOOL (256ull << 20)
#define LITTLE (1ull << 20) /* pending bytes: well under an eighth of the spool */

/* A pacer with 2 s holds, and the thread totals it is fed, advanced by hand. */
struct fixture {
	struct ctp_convert_pacing p;
	struct ctp_cpu_time cpu;
	uint32_t others;  /* runnable threads of others at each turn, on 2 CPUs */
	uint64_t program; /* the program's threads' total waits, or CTP_WAITED_UNKNOWN */
	uint64_t now;
};

static uint64_t program_waits(void *ctx)
{
	return ((struct fixture *)ctx)->program;
}

static void start_knowing(struct fixture *f, uint64_t hold_ms, uint64_t program)
{
	f->cpu = (struct ctp_cpu_time){.ran = 5 * MS, .waited = 1 * MS};
	f->others = CTP_RUNNABLE_UNKNOWN;
	f->program = program;
	f->now = 1000 * MS;
	ctp_convert_pacing_init(&f->p, hold_ms, SPOOL, &f->cpu, 2,
				(struct ctp_program_waited){program_waits, f});
}

/* The program's waits unknown. */
static void start(struct fixture *f, uint64_t hold_ms)
{
	start_knowing(f, hold_ms, CTP_WAITED_UNKNOWN);
}

/* A conversion turn that ran `ran_ms` and waited `waited_ms` for a CPU. */
static void turn(struct fixture *f, uint64_t ran_ms, uint64_t waited_ms, uint64_t pending)
{
	f->cpu.ran += ran_ms * MS;
	f->cpu.waited += waited_ms * MS;
	f->now += (ran_ms + waited_ms) * MS;
	ctp_convert_pacing_turn_done(&f->p, f->now, pending, &f->cpu, f->others);
}

static void a_busy_window_starts_a_hold(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
	turn(&f, 3, 1, LITTLE); /* a quarter waiting */
	assert_true(ctp_convert_pacing_holding(&f.p));
	assert_int_equal(f.p.holds, 1);
	assert_false(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
	assert_int_equal(ctp_convert_pacing_wait_ms(&f.p, f.now), 20);
}

static void a_free_cpu_never_holds(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	for (int i = 0; i < 100; i++) {
		turn(&f, 4, 1, LITTLE); /* a fifth waiting: a CPU was there most of the time */
		assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
	}
	assert_int_equal(f.p.holds, 0);
}

/* The scheduler favours a thread that slept: the converter may take a CPU from the program at
 * once on waking, without waiting. The run queues show it: two threads of others runnable on
 * two CPUs in most samples of the window. Here the program's own waits are unknown, and the run
 * queues decide alone. */
static void cpus_taken_by_others_start_a_hold_without_waiting(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	f.others = 1; /* a one-thread program: a CPU is left */
	for (int i = 0; i < 10; i++)
		turn(&f, 1, 0, LITTLE);
	assert_int_equal(f.p.holds, 0);
	f.others = 2;
	turn(&f, 1, 0, LITTLE);
	f.others = 1;
	turn(&f, 1, 0, LITTLE); /* the window: one sample of two found the CPUs taken */
	assert_int_equal(f.p.holds, 0);
	f.others = 2;
	turn(&f, 1, 0, LITTLE);
	f.others = 3;
	turn(&f, 1, 0, LITTLE); /* both */
	assert_true(ctp_convert_pacing_holding(&f.p));
}

/* The run queues count threads that are not running: beside a one-thread program on two CPUs
 * they found the CPUs taken, while the program waited 0.1-0.5 ms in 200 ms. */
static void full_run_queues_hold_only_when_the_program_waited(void **state)
{
	(void)state;
	struct fixture f;
	start_knowing(&f, 2000, 0);
	f.others = 2;
	for (int i = 0; i < 10; i++) {
		f.program += 10000; /* 10 us in each 2 ms window */
		turn(&f, 2, 0, LITTLE);
	}
	assert_int_equal(f.p.holds, 0);
	f.program += 400000; /* 0.4 ms: a fifth of what the converter ran */
	turn(&f, 2, 0, LITTLE);
	assert_int_equal(f.p.holds, 0);
	f.program += 500000; /* a quarter */
	turn(&f, 2, 0, LITTLE);
	assert_true(ctp_convert_pacing_holding(&f.p));
}

/* The program's waits weigh one window only: what it waited long ago does not make a busy
 * machine now. */
static void the_programs_waits_count_per_window(void **state)
{
	(void)state;
	struct fixture f;
	start_knowing(&f, 2000, 0);
	f.others = 1;
	f.program += 50 * MS; /* a CPU was left: no hold, however long the program waited */
	turn(&f, 2, 0, LITTLE);
	assert_int_equal(f.p.holds, 0);
	f.others = 2;
	turn(&f, 2, 0, LITTLE); /* the CPUs taken, but the program did not wait in this window */
	assert_int_equal(f.p.holds, 0);
}

/* Their waits alone, without the run queues finding the CPUs taken, start nothing: a thread's
 * wake-up on an idle CPU counts as waiting too. */
static void the_programs_waits_alone_do_not_hold(void **state)
{
	(void)state;
	struct fixture f;
	start_knowing(&f, 2000, 0);
	f.others = 1;
	for (int i = 0; i < 10; i++) {
		f.program += 2 * MS;
		turn(&f, 2, 0, LITTLE);
	}
	assert_int_equal(f.p.holds, 0);
}

static void a_short_window_gives_no_verdict(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	f.cpu.waited += 1 * MS; /* 1 ms, all of it waiting: too little to tell */
	ctp_convert_pacing_turn_done(&f.p, f.now, LITTLE, &f.cpu, CTP_RUNNABLE_UNKNOWN);
	assert_false(ctp_convert_pacing_holding(&f.p));
	f.cpu.ran += 1 * MS; /* 2 ms in the window now, half of it waiting */
	ctp_convert_pacing_turn_done(&f.p, f.now, LITTLE, &f.cpu, CTP_RUNNABLE_UNKNOWN);
	assert_true(ctp_convert_pacing_holding(&f.p));
}

static void a_probe_that_finds_a_cpu_ends_the_hold(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, LITTLE);
	f.now += 20 * MS;
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false)); /* the probe */
	turn(&f, 3, 0, LITTLE);
	assert_false(ctp_convert_pacing_holding(&f.p));
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
	assert_int_equal(f.p.held_ns, 23 * MS);
}

static void probes_come_less_often_while_busy(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 60000);
	turn(&f, 2, 2, LITTLE);
	const int waits[] = {20, 40, 80, 160, 160, 160};
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		assert_int_equal(ctp_convert_pacing_wait_ms(&f.p, f.now), waits[i]);
		f.now += (uint64_t)(waits[i] - 1) * MS;
		assert_false(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
		f.now += 1 * MS;
		assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
		turn(&f, 2, 2, LITTLE); /* still busy */
		assert_true(ctp_convert_pacing_holding(&f.p));
	}
	assert_int_equal(f.p.holds, 1);
}

static void a_hold_lasts_at_most_its_longest(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 500);
	turn(&f, 2, 2, LITTLE);
	uint64_t began = f.now;
	f.now = began + 499 * MS;
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false)); /* a probe */
	assert_true(ctp_convert_pacing_holding(&f.p));
	f.now = began + 500 * MS;
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, false));
	assert_false(ctp_convert_pacing_holding(&f.p));
	assert_int_equal(f.p.held_ns, 500 * MS);
	assert_int_equal(f.p.spool_ends, 0); /* ended by its length, not the spool */
}

static void a_quarter_of_the_spool_ends_the_hold(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, LITTLE);
	assert_false(ctp_convert_pacing_convert_now(&f.p, f.now, SPOOL / 4 - 1, false));
	assert_int_equal(f.p.spool_ends, 0);
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, SPOOL / 4, false));
	assert_false(ctp_convert_pacing_holding(&f.p));
	assert_int_equal(f.p.spool_ends, 1); /* the summary names it */
}

/* A load the spool cannot absorb for a whole hold: holding again would only leave the converter
 * idle while the spool fills. */
static void no_hold_after_an_overrun_until_the_spool_is_emptied(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, LITTLE);
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, SPOOL / 4, false));
	turn(&f, 2, 2, LITTLE); /* busy, and little waits: but the last hold overran */
	turn(&f, 2, 2, LITTLE);
	assert_false(ctp_convert_pacing_holding(&f.p));
	turn(&f, 2, 2, 0); /* emptied: holding may start again */
	assert_true(ctp_convert_pacing_holding(&f.p));
	assert_int_equal(f.p.holds, 2);
}

static void the_end_of_the_run_ends_the_hold(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, LITTLE);
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, LITTLE, true));
	assert_false(ctp_convert_pacing_holding(&f.p));
}

/* A quarter of the spool waiting when the run ends is the end's: the program is gone, and no
 * conversion ran beside it that a larger spool would have spared it. */
static void a_full_quarter_at_the_end_is_not_the_spools(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, LITTLE);
	assert_true(ctp_convert_pacing_convert_now(&f.p, f.now, SPOOL / 4, true));
	assert_false(ctp_convert_pacing_holding(&f.p));
	assert_int_equal(f.p.spool_ends, 0);
}

static void a_hold_starts_only_when_little_waits(void **state)
{
	(void)state;
	struct fixture f;
	start(&f, 2000);
	turn(&f, 2, 2, SPOOL / 8); /* a backlog being converted: carry on */
	assert_false(ctp_convert_pacing_holding(&f.p));
	turn(&f, 2, 2, SPOOL / 8 - 1);
	assert_true(ctp_convert_pacing_holding(&f.p));
}

static void turned_off_or_unreadable_never_holds(void **state)
{
	(void)state;
	struct fixture off, unreadable;
	start(&off, 0);
	unreadable.cpu = (struct ctp_cpu_time){0};
	unreadable.now = 1000 * MS;
	ctp_convert_pacing_init(&unreadable.p, 2000, SPOOL, NULL, 2,
				(struct ctp_program_waited){NULL, NULL});
	for (int i = 0; i < 10; i++) {
		turn(&off, 1, 9, LITTLE);
		turn(&unreadable, 1, 9, LITTLE);
	}
	assert_false(ctp_convert_pacing_holding(&off.p));
	assert_false(ctp_convert_pacing_holding(&unreadable.p));
	assert_true(ctp_convert_pacing_convert_now(&off.p, off.now, LITTLE, false));
	assert_true(ctp_convert_pacing_convert_now(&unreadable.p, unreadable.now, LITTLE, false));
}

/* The real run queues: this thread, running, is not counted among the others. */
static void counts_the_runnable_threads_of_others(void **state)
{
	(void)state;
	int fd = ctp_runnable_open();
	assert_true(fd >= 0);
	uint32_t others = ctp_runnable_others(fd, 0);
	assert_true(others != CTP_RUNNABLE_UNKNOWN);
	assert_true(others < 100000);
	assert_int_equal(ctp_runnable_others(-1, 0), CTP_RUNNABLE_UNKNOWN);
	close(fd);
}

/* The real totals: this thread's, growing as it runs. */
static void reads_the_threads_own_totals(void **state)
{
	(void)state;
	int fd = ctp_cpu_time_open();
	assert_true(fd >= 0);
	struct ctp_cpu_time before, after;
	assert_true(ctp_cpu_time_read(fd, &before));
	volatile uint64_t sink = 0;
	struct ctp_cpu_time t;
	do {
		for (int i = 0; i < 1000000; i++)
			sink += (uint64_t)i;
		assert_true(ctp_cpu_time_read(fd, &t));
	} while (t.ran == before.ran);
	after = t;
	assert_true(after.ran > before.ran);
	assert_true(after.waited >= before.waited);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_busy_window_starts_a_hold),
		cmocka_unit_test(a_free_cpu_never_holds),
		cmocka_unit_test(cpus_taken_by_others_start_a_hold_without_waiting),
		cmocka_unit_test(full_run_queues_hold_only_when_the_program_waited),
		cmocka_unit_test(the_programs_waits_count_per_window),
		cmocka_unit_test(the_programs_waits_alone_do_not_hold),
		cmocka_unit_test(a_short_window_gives_no_verdict),
		cmocka_unit_test(a_probe_that_finds_a_cpu_ends_the_hold),
		cmocka_unit_test(probes_come_less_often_while_busy),
		cmocka_unit_test(a_hold_lasts_at_most_its_longest),
		cmocka_unit_test(a_quarter_of_the_spool_ends_the_hold),
		cmocka_unit_test(no_hold_after_an_overrun_until_the_spool_is_emptied),
		cmocka_unit_test(the_end_of_the_run_ends_the_hold),
		cmocka_unit_test(a_full_quarter_at_the_end_is_not_the_spools),
		cmocka_unit_test(a_hold_starts_only_when_little_waits),
		cmocka_unit_test(turned_off_or_unreadable_never_holds),
		cmocka_unit_test(counts_the_runnable_threads_of_others),
		cmocka_unit_test(reads_the_threads_own_totals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

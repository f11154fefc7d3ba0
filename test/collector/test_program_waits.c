/* The traced program's waits for a CPU (collector/program_waits.h): the waits of its threads
 * while followed, summed, never going down; threads found again after a while (at every reading
 * while none is followed), dropped when they end or their process is no longer traced, at most
 * CTP_PROGRAM_WAITS_MAX_THREADS; unknown when none can be read. First on a tree of files laid out
 * as /proc is, then on the real /proc, with two threads of this process made to share one CPU. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/program_waits.h"

#define MS 1000000ull

/* A /proc of files in a fresh directory. */
struct fake_proc {
	char root[64];
};

/* Writes thread tid of pid as having waited `waited` ns ("" when `waited` is UINT64_MAX: a
 * thread that ended reads as nothing). */
static void set_thread(struct fake_proc *f, uint32_t pid, uint32_t tid, uint64_t waited)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%" PRIu32, f->root, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", f->root, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%" PRIu32, f->root, pid, tid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%" PRIu32 "/schedstat", f->root, pid,
		 tid);
	/* Rewritten in place: the follower keeps the file open, as it does the real one. */
	FILE *fp = fopen(path, "r+");
	if (!fp)
		fp = fopen(path, "w");
	assert_non_null(fp);
	assert_true(ftruncate(fileno(fp), 0) == 0);
	if (waited != UINT64_MAX)
		fprintf(fp, "123456 %" PRIu64 " 7\n", waited);
	fclose(fp);
}

static void make_fake(struct fake_proc *f)
{
	snprintf(f->root, sizeof(f->root), "/tmp/ctp-proc-XXXXXX");
	assert_non_null(mkdtemp(f->root));
}

static void remove_fake(struct fake_proc *f)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
}

static void sums_the_waits_of_every_thread_since_found(void **state)
{
	(void)state;
	struct fake_proc f;
	make_fake(&f);
	set_thread(&f, 100, 100, 5 * MS); /* waited before it was found: not counted */
	set_thread(&f, 100, 101, 1 * MS);
	set_thread(&f, 200, 200, 9 * MS); /* not traced */
	struct ctp_program_waits w;
	ctp_program_waits_init(&w, f.root);
	uint32_t pids[] = {100};
	uint64_t now = 1000 * MS;
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now), 0);
	assert_int_equal(w.nthreads, 2);
	set_thread(&f, 100, 100, 6 * MS);
	set_thread(&f, 100, 101, 3 * MS);
	set_thread(&f, 200, 200, 50 * MS);
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 1 * MS), 3 * MS);
	set_thread(&f, 100, 101, 2 * MS); /* cannot go down; counted from here */
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 2 * MS), 3 * MS);
	set_thread(&f, 100, 101, 4 * MS);
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 3 * MS), 5 * MS);
	ctp_program_waits_free(&w);
	remove_fake(&f);
}

/* Threads that end are dropped and their waits kept; new ones are found at the next listing. */
static void follows_threads_as_they_come_and_go(void **state)
{
	(void)state;
	struct fake_proc f;
	make_fake(&f);
	set_thread(&f, 100, 100, 0);
	set_thread(&f, 100, 101, 0);
	struct ctp_program_waits w;
	ctp_program_waits_init(&w, f.root);
	uint32_t pids[] = {100};
	uint64_t now = 1000 * MS;
	ctp_program_waits_read(&w, pids, 1, now);
	set_thread(&f, 100, 101, 4 * MS);
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 1 * MS), 4 * MS);
	set_thread(&f, 100, 101, UINT64_MAX); /* it ended */
	set_thread(&f, 100, 102, 7 * MS);     /* a new one */
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 2 * MS), 4 * MS);
	assert_int_equal(w.nthreads, 1);
	set_thread(&f, 100, 102, 8 * MS); /* not listed yet: 100 ms between listings */
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 99 * MS), 4 * MS);
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 100 * MS), 4 * MS);
	assert_int_equal(w.nthreads, 2);
	set_thread(&f, 100, 102, 10 * MS);
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, now + 101 * MS), 6 * MS);
	ctp_program_waits_free(&w);
	remove_fake(&f);
}

/* A process that is no longer traced (it ended, or exec'd) leaves at the next listing; with no
 * thread left to read, the waits are unknown. */
static void forgets_processes_no_longer_traced(void **state)
{
	(void)state;
	struct fake_proc f;
	make_fake(&f);
	set_thread(&f, 100, 100, 0);
	set_thread(&f, 300, 300, 0);
	struct ctp_program_waits w;
	ctp_program_waits_init(&w, f.root);
	uint32_t both[] = {100, 300}, one[] = {300};
	uint64_t now = 1000 * MS;
	assert_int_equal(ctp_program_waits_read(&w, both, 2, now), 0);
	assert_int_equal(w.nthreads, 2);
	assert_int_equal(ctp_program_waits_read(&w, one, 1, now + 100 * MS), 0);
	assert_int_equal(w.nthreads, 1);
	assert_int_equal(ctp_program_waits_read(&w, NULL, 0, now + 200 * MS), CTP_WAITED_UNKNOWN);
	/* Following nothing, it looks again at once. */
	assert_int_equal(ctp_program_waits_read(&w, one, 1, now + 201 * MS), 0);
	assert_int_equal(w.nthreads, 1);
	uint32_t gone[] = {400};
	ctp_program_waits_free(&w);
	ctp_program_waits_init(&w, f.root);
	assert_int_equal(ctp_program_waits_read(&w, gone, 1, now), CTP_WAITED_UNKNOWN);
	ctp_program_waits_free(&w);
	remove_fake(&f);
}

static void follows_at_most_its_limit(void **state)
{
	(void)state;
	struct fake_proc f;
	make_fake(&f);
	for (uint32_t t = 0; t < CTP_PROGRAM_WAITS_MAX_THREADS + 6; t++)
		set_thread(&f, 100, 1000 + t, 0);
	struct ctp_program_waits w;
	ctp_program_waits_init(&w, f.root);
	uint32_t pids[] = {100};
	assert_int_equal(ctp_program_waits_read(&w, pids, 1, 1000 * MS), 0);
	assert_int_equal(w.nthreads, CTP_PROGRAM_WAITS_MAX_THREADS);
	ctp_program_waits_free(&w);
	remove_fake(&f);
}

/* ---- the real /proc --------------------------------------------------------------------- */

static void *spin(void *arg)
{
	volatile uint64_t *stop = arg;
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Two threads of this process spinning on one CPU: each waits while the other runs. */
static void reads_the_waits_of_real_threads(void **state)
{
	(void)state;
	cpu_set_t one;
	CPU_ZERO(&one);
	assert_true(sched_getaffinity(0, sizeof(one), &one) == 0);
	int cpu = 0;
	while (!CPU_ISSET(cpu, &one))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	volatile uint64_t stop = 0;
	pthread_t a, b;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	assert_int_equal(pthread_attr_setaffinity_np(&attr, sizeof(one), &one), 0);
	assert_int_equal(pthread_create(&a, &attr, spin, (void *)&stop), 0);
	assert_int_equal(pthread_create(&b, &attr, spin, (void *)&stop), 0);
	pthread_attr_destroy(&attr);

	struct ctp_program_waits w;
	ctp_program_waits_init(&w, "/proc");
	uint32_t pids[] = {(uint32_t)getpid()};
	uint64_t first = ctp_program_waits_read(&w, pids, 1, monotonic_ns());
	assert_true(first != CTP_WAITED_UNKNOWN);
	assert_true(w.nthreads >= 3); /* this one and the two spinners */
	/* Each spinner waits out the other's slices (a few ms each): 20 ms of waits come within
	 * a second; 10 s without them is a failure. */
	uint64_t began = monotonic_ns(), total = first;
	while (total - first < 20 * MS && monotonic_ns() - began < 10000 * MS) {
		struct timespec pause = {0, 10 * 1000000};
		nanosleep(&pause, NULL);
		total = ctp_program_waits_read(&w, pids, 1, monotonic_ns());
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert_true(total - first >= 20 * MS);
	ctp_program_waits_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sums_the_waits_of_every_thread_since_found),
		cmocka_unit_test(follows_threads_as_they_come_and_go),
		cmocka_unit_test(forgets_processes_no_longer_traced),
		cmocka_unit_test(follows_at_most_its_limit),
		cmocka_unit_test(reads_the_waits_of_real_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

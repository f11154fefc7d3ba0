/* The preload's stack map (preload/stackmap.c), built in over stations made up here: which live
 * coroutine's stack holds an address, for stacks in its table of pages (under 64 KiB) and in its
 * table of 64 KiB chunks (the rest) side by side; what a stack's removal and a retire over a
 * range do. The stacks are never touched: the map only compares addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "preload/events.h"
#include "preload/stackmap.h"
#include "preload/stations.h"

enum { STATIONS = 64, KIB = 1024 };

struct ctp_station_dir ctp_station_dir;

/* What the preload's events.c does when a coroutine is abandoned, as far as the map can tell:
 * the station ends. Counted per station. */
static int abandoned[STATIONS];
void ctp_coro_abandon(struct ctp_thread *t, uint32_t idx)
{
	(void)t;
	abandoned[idx]++;
	__atomic_store_n(&ctp_station_at(idx)->state, CTP_STATE_EXITED, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	uint32_t size = ctp_station_size(0);
	ctp_station_dir.station_size = size;
	ctp_station_dir.chunk[0] = aligned_alloc(64, (size_t)size * STATIONS);
	if (!ctp_station_dir.chunk[0])
		return -1;
	memset(ctp_station_dir.chunk[0], 0, (size_t)size * STATIONS);
	memset(abandoned, 0, sizeof(abandoned));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(ctp_station_dir.chunk[0]);
	ctp_station_dir.chunk[0] = NULL;
	return 0;
}

/* Each test uses its own region of addresses, so that what one leaves in the map (the map is
 * static, and lives for the process) cannot answer for another. */
static uint64_t region(int test)
{
	return 0x500000000000ull + (uint64_t)test * 0x10000000ull;
}

/* A suspended coroutine on [lo, hi), registered by `maker`. */
static void make_by(struct ctp_thread *maker, uint32_t idx, uint64_t lo, uint64_t hi)
{
	struct ctp_station *s = ctp_station_at(idx);
	s->stack_lo = lo;
	s->stack_hi = hi;
	s->kind = CTP_KIND_UCONTEXT;
	s->state = CTP_STATE_SUSPENDED;
	ctp_stackmap_claim(maker, idx, lo, hi);
}

static void make(uint32_t idx, uint64_t lo, uint64_t hi)
{
	struct ctp_thread maker = {.current = CTP_NO_STATION};
	make_by(&maker, idx, lo, hi);
}

/* Every 1 KiB of [lo, hi), and its first and last byte, belongs to idx. */
static void assert_owns(uint32_t idx, uint64_t lo, uint64_t hi)
{
	assert_int_equal(ctp_stackmap_find(lo), idx);
	assert_int_equal(ctp_stackmap_find(hi - 1), idx);
	for (uint64_t a = lo; a < hi; a += KIB)
		assert_int_equal(ctp_stackmap_find(a), idx);
}

/* Large stacks two to a chunk, none aligned, with a small one between each two: every address
 * is its own stack's, and an address beside them nobody's. Also the sizes on either side of the
 * tables' boundary. */
static void test_large_and_small_side_by_side(void **state)
{
	(void)state;
	uint64_t at = region(0) + 36 * KIB;
	uint64_t lo[9], hi[9];
	for (uint32_t i = 0; i < 9; i++) {
		uint64_t size = i % 2 ? 16 * KIB : 96 * KIB;
		lo[i] = at;
		hi[i] = at + size;
		make(i, lo[i], hi[i]);
		at = hi[i];
	}
	for (uint32_t i = 0; i < 9; i++)
		assert_owns(i, lo[i], hi[i]);
	assert_int_equal(ctp_stackmap_find(lo[0] - 1), CTP_NO_STATION);
	assert_int_equal(ctp_stackmap_find(hi[8]), CTP_NO_STATION);

	/* 64 KiB exactly (the chunk table) next to 64 KiB less 4 KiB (the page table). */
	uint64_t a = region(0) + 0x1000000 + 8 * KIB;
	make(9, a, a + 64 * KIB);
	make(10, a + 64 * KIB, a + 124 * KIB);
	make(11, a + 124 * KIB, a + 188 * KIB);
	assert_owns(9, a, a + 64 * KIB);
	assert_owns(10, a + 64 * KIB, a + 124 * KIB);
	assert_owns(11, a + 124 * KIB, a + 188 * KIB);
}

/* A removed stack answers no more, though its station still says it lives (removal is what the
 * map must not leave to the station), and its neighbours in the same chunks still answer. */
static void test_removal(void **state)
{
	(void)state;
	uint64_t a = region(1) + 20 * KIB;
	make(0, a, a + 100 * KIB);
	make(1, a + 100 * KIB, a + 116 * KIB);
	make(2, a + 116 * KIB, a + 216 * KIB);
	ctp_stackmap_remove(0, a, a + 100 * KIB);
	ctp_stackmap_remove(1, a + 100 * KIB, a + 116 * KIB);
	for (uint64_t p = a; p < a + 116 * KIB; p += KIB)
		assert_int_equal(ctp_stackmap_find(p), CTP_NO_STATION);
	assert_owns(2, a + 116 * KIB, a + 216 * KIB);

	/* The same range made anew is the new coroutine's. */
	make(3, a, a + 100 * KIB);
	assert_owns(3, a, a + 100 * KIB);
}

/* A stack made over part of live ones retires exactly those it overlaps, in either table, once
 * each; a coroutine whose stack ends where the range begins is left alone. */
static void test_retire_overlapping(void **state)
{
	(void)state;
	struct ctp_thread t = {.current = CTP_NO_STATION};
	uint64_t a = region(2) + 12 * KIB;
	make(0, a, a + 80 * KIB);	       /* large, overlapped at its top */
	make(1, a + 80 * KIB, a + 96 * KIB);   /* small, overlapped whole */
	make(2, a + 96 * KIB, a + 200 * KIB);  /* large, overlapped at its bottom */
	make(3, a + 200 * KIB, a + 300 * KIB); /* large, beside the range */
	make(4, a + 300 * KIB, a + 304 * KIB); /* small, beside it too */
	ctp_stackmap_retire_overlapping(&t, a + 79 * KIB, a + 200 * KIB);
	assert_int_equal(abandoned[0], 1);
	assert_int_equal(abandoned[1], 1);
	assert_int_equal(abandoned[2], 1);
	assert_int_equal(abandoned[3], 0);
	assert_int_equal(abandoned[4], 0);
	/* Ended, they answer no more; the others still do. */
	assert_int_equal(ctp_stackmap_find(a + 10 * KIB), CTP_NO_STATION);
	assert_int_equal(ctp_stackmap_find(a + 150 * KIB), CTP_NO_STATION);
	assert_owns(3, a + 200 * KIB, a + 300 * KIB);
	assert_owns(4, a + 300 * KIB, a + 304 * KIB);

	/* The running coroutine is never retired by a range over its own stack. */
	t.current = 3;
	ctp_stackmap_retire_overlapping(&t, a + 250 * KIB, a + 260 * KIB);
	assert_int_equal(abandoned[3], 0);
}

/* A stack made over live ones owns its range at once. The live stacks it overlaps are retired,
 * in either table (the large one is in the chunks' table, the new one in the pages'); one that
 * only shares its last page keeps answering for its own range; the running coroutine is never
 * retired. */
static void test_claim(void **state)
{
	(void)state;
	uint64_t a = region(3) + 8 * KIB;
	make(0, a, a + 100 * KIB);	       /* large, overlapped at its top */
	make(1, a + 100 * KIB, a + 110 * KIB); /* small, overlapped whole */
	make(2, a + 122 * KIB, a + 126 * KIB); /* small, on the new one's last page only */
	make(3, a + 110 * KIB, a + 112 * KIB); /* small, overlapped whole, but running */
	struct ctp_thread t = {.current = 3};
	make_by(&t, 4, a + 98 * KIB, a + 121 * KIB);
	assert_int_equal(abandoned[0], 1);
	assert_int_equal(abandoned[1], 1);
	assert_int_equal(abandoned[2], 0);
	assert_int_equal(abandoned[3], 0);
	assert_owns(4, a + 98 * KIB, a + 108 * KIB);
	assert_owns(4, a + 112 * KIB, a + 121 * KIB);
	assert_owns(2, a + 122 * KIB, a + 126 * KIB);
	assert_int_equal(ctp_stackmap_find(a + 97 * KIB), CTP_NO_STATION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_large_and_small_side_by_side, setup, teardown),
		cmocka_unit_test_setup_teardown(test_removal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retire_overlapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

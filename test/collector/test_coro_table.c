/* The collector's coroutine table: every id gets one record until it is removed, found again by
 * id after any number of inserts, growths and removals of others, with its fields kept; reserve
 * keeps pointers valid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collector/coro_table.h"

static void empty_table_finds_nothing(void **state)
{
	(void)state;
	struct ctp_coro_table t = {0};
	assert_null(ctp_coro_find(&t, 1));
	assert_null(ctp_coro_find(&t, 0));
	ctp_coro_table_free(&t);
}

static void get_makes_a_zeroed_record_once(void **state)
{
	(void)state;
	struct ctp_coro_table t = {0};
	bool is_new;
	struct ctp_coro *c = ctp_coro_get(&t, 7, &is_new);
	assert_true(is_new);
	assert_int_equal(c->id, 7);
	assert_int_equal(c->since, 0);
	assert_int_equal(c->tid, 0);
	assert_int_equal(c->switches, 0);
	assert_int_equal(c->state, 0);
	assert_int_equal(c->flags, 0);
	c->tid = 42;
	c->flags = CTP_CORO_ANNOUNCED;

	struct ctp_coro *again = ctp_coro_get(&t, 7, &is_new);
	assert_false(is_new);
	assert_ptr_equal(again, c);
	assert_int_equal(again->tid, 42);
	assert_ptr_equal(ctp_coro_find(&t, 7), c);
	assert_null(ctp_coro_find(&t, 8));
	assert_int_equal(t.count, 1);
	ctp_coro_table_free(&t);
	assert_null(t.slots);
	assert_int_equal(t.count, 0);
}

/* Many ids, consecutive (as the preload hands them out) and scattered (ids across exec carry a
 * base): each is found with its own fields after the table grew many times. */
static void many_ids_survive_growth(void **state)
{
	(void)state;
	struct ctp_coro_table t = {0};
	enum { N = 20000 };
	for (uint64_t i = 1; i <= N; i++) {
		bool is_new;
		uint64_t ids[2] = {i, (i << 32) | 0x5a5a};
		for (int k = 0; k < 2; k++) {
			struct ctp_coro *c = ctp_coro_get(&t, ids[k], &is_new);
			assert_true(is_new);
			c->since = ids[k] * 3;
			c->tid = (uint32_t)i;
			c->switches = (uint32_t)k;
		}
	}
	assert_int_equal(t.count, 2 * N);
	assert_true(t.cap >= 4 * N); /* load stays under a half */
	for (uint64_t i = 1; i <= N; i++) {
		uint64_t ids[2] = {i, (i << 32) | 0x5a5a};
		for (int k = 0; k < 2; k++) {
			const struct ctp_coro *c = ctp_coro_find(&t, ids[k]);
			assert_non_null(c);
			assert_int_equal(c->id, ids[k]);
			assert_int_equal(c->since, ids[k] * 3);
			assert_int_equal(c->tid, (uint32_t)i);
			assert_int_equal(c->switches, (uint32_t)k);
		}
	}
	assert_null(ctp_coro_find(&t, N + 1));
	ctp_coro_table_free(&t);
}

/* The converter holds two records at once (a switch's from and to): after reserve(2), the
 * inserts do not move the one it already holds. */
static void reserve_keeps_pointers_valid(void **state)
{
	(void)state;
	struct ctp_coro_table t = {0};
	bool is_new;
	/* Fill up to the brink of growing: the next insert would rehash. */
	uint64_t id = 1;
	ctp_coro_get(&t, id, &is_new);
	while ((t.count + 1) * 2 <= t.cap)
		ctp_coro_get(&t, ++id, &is_new);
	size_t cap = t.cap;

	ctp_coro_table_reserve(&t, 2);
	assert_true(t.cap > cap);
	struct ctp_coro *held = ctp_coro_find(&t, 1);
	struct ctp_coro *a = ctp_coro_get(&t, 1000001, &is_new);
	assert_true(is_new);
	struct ctp_coro *b = ctp_coro_get(&t, 1000002, &is_new);
	assert_true(is_new);
	assert_ptr_equal(ctp_coro_find(&t, 1), held);
	assert_ptr_equal(ctp_coro_find(&t, 1000001), a);
	assert_ptr_equal(ctp_coro_find(&t, 1000002), b);
	assert_int_equal(held->id, 1);
	ctp_coro_table_free(&t);
}

/* Removal, against a model: random inserts and removals of ids from a small range in a small
 * table, so that probe runs are long, collide and wrap around its end. After each step every id
 * the model holds is found with its fields, and no other. */
static void removals_keep_every_other_record_findable(void **state)
{
	(void)state;
	enum { IDS = 48, STEPS = 200000 };
	struct ctp_coro_table t = {0};
	bool in[IDS + 1] = {false};
	uint64_t rng = 0x2545F4914F6CDD1Dull;
	for (int step = 0; step < STEPS; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		/* Ids in two blocks far apart: the hash puts them all over the slots. */
		uint64_t k = rng % IDS + 1, id = k <= IDS / 2 ? k : (k << 32) | 7;
		bool is_new;
		if (in[k]) {
			ctp_coro_remove(&t, id);
			in[k] = false;
		} else {
			struct ctp_coro *c = ctp_coro_get(&t, id, &is_new);
			assert_true(is_new);
			c->since = id * 3;
			in[k] = true;
		}
		size_t count = 0;
		for (uint64_t j = 1; j <= IDS; j++) {
			uint64_t jid = j <= IDS / 2 ? j : (j << 32) | 7;
			const struct ctp_coro *c = ctp_coro_find(&t, jid);
			if (!in[j]) {
				assert_null(c);
				continue;
			}
			assert_non_null(c);
			assert_int_equal(c->since, jid * 3);
			count++;
		}
		assert_int_equal(t.count, count);
	}
	assert_true(t.cap <= 128);     /* removals made room: the table did not keep growing */
	ctp_coro_remove(&t, 1u << 20); /* not there: nothing happens */
	ctp_coro_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_table_finds_nothing),
		cmocka_unit_test(get_makes_a_zeroed_record_once),
		cmocka_unit_test(many_ids_survive_growth),
		cmocka_unit_test(reserve_keeps_pointers_valid),
		cmocka_unit_test(removals_keep_every_other_record_findable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

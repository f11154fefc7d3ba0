/* The log of the coroutines that ended: their ids are known again, near and far apart; every
 * record comes back with its fields, in the order added, across blocks written to the temporary
 * file; where no file can be made the log stays whole in memory; and a file that lost its
 * records is said to be short while every other record still comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/ended_coros.h"

static struct ctp_ended_coro record_of(uint64_t id)
{
	return (struct ctp_ended_coro){.id = id,
				       .since = id * 1000 + 7,
				       .tid = (uint32_t)(id % 97),
				       .switches = (uint32_t)id};
}

struct seen {
	uint64_t n, next_id, wrong;
};

/* The ids were added as 1, 2, 3, ...: each record must be the next, with its own fields. */
static void count_in_order(const struct ctp_ended_coro *c, void *ctx)
{
	struct seen *s = ctx;
	struct ctp_ended_coro want = record_of(s->next_id);
	if (c->id != want.id || c->since != want.since || c->tid != want.tid ||
	    c->switches != want.switches)
		s->wrong++;
	s->n++;
	s->next_id = c->id + 1;
}

/* Adds ids 1..n, each with record_of's fields. */
static void add_in_order(struct ctp_ended_coros *e, uint64_t n)
{
	for (uint64_t id = 1; id <= n; id++) {
		struct ctp_ended_coro c = record_of(id);
		ctp_ended_coros_add(e, &c);
	}
}

/* Reads the log back: all n of add_in_order's records, whole and in order. */
static void expect_all_in_order(struct ctp_ended_coros *e, uint64_t n)
{
	struct seen s = {.next_id = 1};
	assert_true(ctp_ended_coros_each(e, count_in_order, &s));
	assert_int_equal(s.n, n);
	assert_int_equal(s.wrong, 0);
}

static void ids_are_known_again(void **state)
{
	(void)state;
	struct ctp_ended_coros e;
	ctp_ended_coros_init(&e);
	assert_false(ctp_ended_coros_has(&e, 1));
	uint64_t far = (7ull << 40) | 3;
	for (uint64_t id = 1; id <= 20000; id += 3) {
		struct ctp_ended_coro c = record_of(id);
		ctp_ended_coros_add(&e, &c);
	}
	struct ctp_ended_coro c = record_of(far);
	ctp_ended_coros_add(&e, &c);
	for (uint64_t id = 1; id <= 20001; id++)
		assert_int_equal(ctp_ended_coros_has(&e, id), id % 3 == 1);
	assert_true(ctp_ended_coros_has(&e, far));
	assert_false(ctp_ended_coros_has(&e, far + 1));
	assert_false(ctp_ended_coros_has(&e, 0));
	ctp_ended_coros_free(&e);
	assert_false(ctp_ended_coros_has(&e, 4));
}

static void records_come_back_in_order_across_the_file(void **state)
{
	(void)state;
	struct ctp_ended_coros e;
	ctp_ended_coros_init(&e);
	const uint64_t n = 3 * CTP_ENDED_BLOCK + 5;
	add_in_order(&e, n);
	assert_true(e.fd >= 0);
	assert_int_equal(e.in_file, 3 * CTP_ENDED_BLOCK);
	assert_true(e.buf_cap <= CTP_ENDED_BLOCK); /* memory holds one block at most */
	assert_false(e.memory_only);
	expect_all_in_order(&e, n);
	ctp_ended_coros_free(&e);
}

static void without_a_file_the_log_stays_in_memory(void **state)
{
	(void)state;
	struct ctp_ended_coros e;
	ctp_ended_coros_init(&e);
	const char *was = getenv("TMPDIR");
	char *saved = was ? strdup(was) : NULL;
	assert_int_equal(setenv("TMPDIR", "/nonexistent/ctp-test", 1), 0);
	const uint64_t n = 2 * CTP_ENDED_BLOCK + 1;
	add_in_order(&e, n);
	assert_true(e.memory_only);
	assert_int_equal(e.in_file, 0);
	expect_all_in_order(&e, n);
	ctp_ended_coros_free(&e);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

static void a_short_file_is_said_and_the_rest_comes_back(void **state)
{
	(void)state;
	struct ctp_ended_coros e;
	ctp_ended_coros_init(&e);
	add_in_order(&e, CTP_ENDED_BLOCK + 10);
	assert_int_equal(e.in_file, CTP_ENDED_BLOCK);
	/* Half the block gone (someone truncated the file). */
	assert_int_equal(ftruncate(e.fd, CTP_ENDED_BLOCK / 2 * sizeof(struct ctp_ended_coro)), 0);
	struct seen s = {.next_id = 1};
	assert_false(ctp_ended_coros_each(&e, count_in_order, &s));
	/* The first half of the block, then the 10 in memory (the jump in ids counts once). */
	assert_int_equal(s.n, CTP_ENDED_BLOCK / 2 + 10);
	assert_int_equal(s.wrong, 1);
	ctp_ended_coros_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_are_known_again),
		cmocka_unit_test(records_come_back_in_order_across_the_file),
		cmocka_unit_test(without_a_file_the_log_stays_in_memory),
		cmocka_unit_test(a_short_file_is_said_and_the_rest_comes_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

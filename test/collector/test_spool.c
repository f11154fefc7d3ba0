/* The spool between the harvester and the converter: the reader gets every committed byte once,
 * in order and unchanged, never an uncommitted one, across chunks and with a writer on another
 * thread; batches larger than a chunk fit; the budget counts what is held and pending, gives
 * memory back when read, a trimmed idle spool holds nothing, and memory that runs out below the
 * limit lowers it instead of ending the collector. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "collector/address_space.h"
#include "collector/spool.h"

#define LIMIT (64ull << 20)

/* The byte at absolute position `pos` of the test's stream. */
static uint8_t pattern(uint64_t pos)
{
	return (uint8_t)((pos * 131) ^ (pos >> 9));
}

/* Writes one batch of `n` bytes of the stream starting at `*pos`, and commits it. */
static void write_batch(struct ctp_spool *s, uint64_t *pos, size_t n)
{
	size_t room;
	uint8_t *p = ctp_spool_write_room(s, n, &room);
	assert_non_null(p);
	assert_true(room >= n);
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(*pos + i);
	ctp_spool_commit(s, n);
	*pos += n;
}

/* Reads whatever is committed, checks it against the stream at `*pos`, returns bytes read. */
static uint64_t read_all(struct ctp_spool *s, uint64_t *pos)
{
	uint64_t total = 0;
	for (;;) {
		size_t n;
		const uint8_t *p = ctp_spool_peek(s, &n);
		if (!p) {
			assert_int_equal(n, 0);
			return total;
		}
		assert_true(n > 0);
		for (size_t i = 0; i < n; i++)
			if (p[i] != pattern(*pos + i))
				fail_msg("byte %llu differs", (unsigned long long)(*pos + i));
		*pos += n;
		total += n;
		ctp_spool_consumed(s, n);
	}
}

static void empty_spool_gives_nothing(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, LIMIT);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	size_t n = 1;
	assert_null(ctp_spool_peek(&s, &n));
	assert_int_equal(n, 0);
	/* Room taken but nothing committed: the reader sees nothing. */
	size_t room;
	uint8_t *p = ctp_spool_write_room(&s, 100, &room);
	memset(p, 0xee, 100);
	assert_null(ctp_spool_peek(&s, &n));
	assert_int_equal(n, 0);
	assert_int_equal(b.pending, 0);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
	assert_int_equal(b.used, 0);
}

/* Batches of many sizes, more than several chunks in all, some of them bigger than a chunk:
 * read back exactly, and only what was committed. */
static void keeps_and_returns_bytes_exactly(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, LIMIT);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	uint64_t wpos = 0, rpos = 0;
	size_t sizes[] = {8, 24, 4096, 100000, CTP_SPOOL_CHUNK - 8, CTP_SPOOL_CHUNK + 777, 16, 1};
	for (int round = 0; round < 6; round++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			write_batch(&s, &wpos, sizes[i]);
			assert_int_equal(b.pending, wpos - rpos);
		}
		if (round % 2) /* sometimes read between rounds, sometimes let it pile up */
			read_all(&s, &rpos);
	}
	read_all(&s, &rpos);
	assert_int_equal(rpos, wpos);
	assert_int_equal(b.pending, 0);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
	assert_int_equal(b.used, 0);
	assert_int_equal(b.pooled, 0);
}

/* A batch never straddles chunks: what one peek gives ends at a batch's end. */
static void a_peek_ends_at_a_batch_end(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, LIMIT);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	uint64_t wpos = 0;
	size_t batch = 100000; /* two fit in a chunk, the third does not */
	for (int i = 0; i < 5; i++)
		write_batch(&s, &wpos, batch);
	uint64_t seen = 0;
	for (;;) {
		size_t n;
		const uint8_t *p = ctp_spool_peek(&s, &n);
		if (!p)
			break;
		assert_int_equal(n % batch, 0);
		assert_int_equal(p[0], pattern(seen));
		seen += n;
		ctp_spool_consumed(&s, n);
	}
	assert_int_equal(seen, 5 * batch);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
}

/* The budget: nothing stocked until a chunk is needed; room shrinks with what spools hold; read
 * and trimmed, an idle spool holds nothing, and the freed chunk is pooled (touched memory for
 * the harvester), within the limit. */
static void budget_counts_and_trim_gives_back(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, 4 * CTP_SPOOL_CHUNK);
	assert_int_equal(ctp_spool_budget_room(&b), 4 * CTP_SPOOL_CHUNK);
	/* Nothing is stocked before the harvester has needed a chunk (a short program pays no
	 * page faults for a pool it never uses). */
	ctp_spool_budget_stock(&b);
	assert_int_equal(b.used, 0);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	uint64_t wpos = 0, rpos = 0;
	write_batch(&s, &wpos, 1000);
	assert_int_equal(ctp_spool_budget_room(&b), 3 * CTP_SPOOL_CHUNK);
	assert_int_equal(b.peak, CTP_SPOOL_CHUNK);

	ctp_spool_trim(&s); /* not read yet: nothing to give back */
	assert_int_equal(ctp_spool_budget_room(&b), 3 * CTP_SPOOL_CHUNK);
	read_all(&s, &rpos);
	ctp_spool_trim(&s);
	assert_int_equal(ctp_spool_budget_room(&b), 4 * CTP_SPOOL_CHUNK);
	assert_int_equal(b.pooled, CTP_SPOOL_CHUNK);
	size_t n;
	assert_null(ctp_spool_peek(&s, &n));

	/* Writing again takes the pooled chunk, not new memory. */
	uint64_t used = b.used;
	write_batch(&s, &wpos, 1000);
	assert_int_equal(b.used, used);
	assert_int_equal(b.pooled, 0);
	read_all(&s, &rpos);
	assert_int_equal(rpos, wpos);

	/* Stocking fills the pool up to its target, never past the limit. */
	ctp_spool_budget_stock(&b);
	assert_true(b.used <= b.limit);
	assert_int_equal(b.pooled, b.pool_target * CTP_SPOOL_CHUNK);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
	assert_int_equal(b.used, 0);
}

/* Where memory runs out below the limit (an address-space limit whose room other mappings
 * took), stocking stops there and the limit comes down to what is held: the harvester then
 * finds the budget spent and leaves records in the rings, rather than the collector aborting
 * with the trace unwritten. */
static void memory_running_out_lowers_the_limit(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, LIMIT);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	uint64_t wpos = 0, rpos = 0;
	write_batch(&s, &wpos, 1000); /* from an empty pool: stocking is due */

	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	/* Room for two more chunks, not the pool's first four. */
	struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + 2 * CTP_SPOOL_CHUNK + 64 * 1024,
			       .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	ctp_spool_budget_stock(&b);
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);

	assert_int_equal(b.pooled, 2 * CTP_SPOOL_CHUNK);
	assert_int_equal(b.limit, 3 * CTP_SPOOL_CHUNK);
	assert_int_equal(ctp_spool_budget_room(&b), 2 * CTP_SPOOL_CHUNK);
	/* Held chunks still go round: what is read comes back as room. */
	read_all(&s, &rpos);
	ctp_spool_trim(&s);
	assert_int_equal(ctp_spool_budget_room(&b), 3 * CTP_SPOOL_CHUNK);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
	assert_int_equal(b.used, 0);
}

/* One writer thread, one reader thread, as in the collector: every byte arrives once, in order. */
struct writer_arg {
	struct ctp_spool *s;
	uint64_t total;
};

static void *writer_main(void *p)
{
	struct writer_arg *a = p;
	uint64_t pos = 0;
	for (uint32_t i = 0; pos < a->total; i++) {
		size_t n = 8 + (i * 7919u) % 20000;
		if (pos + n > a->total)
			n = (size_t)(a->total - pos);
		size_t room;
		uint8_t *d = ctp_spool_write_room(a->s, n, &room);
		for (size_t k = 0; k < n; k++)
			d[k] = pattern(pos + k);
		ctp_spool_commit(a->s, n);
		pos += n;
		if (i % 64 == 0)
			ctp_spool_trim(a->s);
	}
	return NULL;
}

static void writer_and_reader_on_two_threads(void **state)
{
	(void)state;
	struct ctp_spool_budget b;
	ctp_spool_budget_init(&b, LIMIT);
	struct ctp_spool s;
	ctp_spool_init(&s, &b);
	struct writer_arg a = {.s = &s, .total = 24ull << 20};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, writer_main, &a), 0);
	uint64_t rpos = 0;
	while (rpos < a.total) {
		if (read_all(&s, &rpos) == 0) {
			ctp_spool_budget_stock(&b); /* what the converter does when idle */
			sched_yield();
		}
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(read_all(&s, &rpos), 0);
	assert_int_equal(rpos, a.total);
	assert_int_equal(b.pending, 0);
	ctp_spool_free(&s);
	ctp_spool_budget_fini(&b);
	assert_int_equal(b.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_spool_gives_nothing),
		cmocka_unit_test(keeps_and_returns_bytes_exactly),
		cmocka_unit_test(a_peek_ends_at_a_batch_end),
		cmocka_unit_test(budget_counts_and_trim_gives_back),
		cmocka_unit_test(memory_running_out_lowers_the_limit),
		cmocka_unit_test(writer_and_reader_on_two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

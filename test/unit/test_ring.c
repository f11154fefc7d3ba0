/* The event ring, one thread: order and content, wrap-around with PAD at every alignment, exact
 * drop counting, the consumer's byte budget, and corrupt rings (a traced process can write
 * anything into its segment, so the consumer must survive every value). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ring_fixture.h"

enum { MAX_SEEN = 4096 };

/* What the consumer saw, in order. */
struct seen {
	size_t n;
	size_t bad; /* records that failed their self-check */
	uint64_t seq[MAX_SEEN];
	uint32_t size[MAX_SEEN];
};

static void collect(void *ctx, const struct ctp_rec *rec)
{
	struct seen *s = ctx;
	uint64_t seq;
	if (!test_rec_check(rec, &seq)) {
		s->bad++;
		return;
	}
	if (s->n < MAX_SEEN) {
		s->seq[s->n] = seq;
		s->size[s->n] = rec->size;
	}
	s->n++;
}

static enum ctp_ring_status consume(struct test_ring *t, uint64_t max_bytes, struct seen *s,
				    uint64_t *bytes)
{
	return ctp_ring_consume(t->ring, t->data, t->capacity, max_bytes, collect, s, bytes);
}

static void records_come_back_in_order(void **state)
{
	(void)state;
	struct test_ring t;
	test_ring_init(&t, 1024, 0);
	static struct seen s;
	memset(&s, 0, sizeof(s));
	uint64_t written = 0;
	for (uint64_t i = 0; i < 30; i++) {
		uint32_t size = 8 + 8 * (uint32_t)(i % 7);
		assert_true(test_ring_put(&t, size, i));
		written += size;
	}
	assert_int_equal(t.ring->head, written);
	assert_int_equal(ctp_ring_fill(&t.prod), written);

	uint64_t bytes = 0;
	assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_OK);
	assert_int_equal(bytes, written);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.n, 30);
	for (uint64_t i = 0; i < 30; i++) {
		assert_int_equal(s.seq[i], i);
		assert_int_equal(s.size[i], 8 + 8 * (i % 7));
	}
	assert_int_equal(t.ring->tail, t.ring->head);
	assert_int_equal(t.ring->dropped, 0);

	/* Nothing new: a second harvest reads nothing and leaves tail alone. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_OK);
	assert_int_equal(bytes, 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(t.ring->tail, written);
	test_ring_free(&t);
}

/* One scenario of the wrap test: `unread` bytes of 8-byte records already in the ring, ending
 * `to_end` bytes before the end of the data area, then one record of `size` bytes. It must be
 * written at position 0 behind a PAD when it does not fit before the end, and dropped (with
 * nothing written at all) exactly when pad + size exceeds the free room. */
static void wrap_scenario(uint64_t base, uint64_t cap, uint64_t to_end, uint32_t size,
			  uint64_t unread)
{
	struct test_ring t;
	uint64_t start = base + ((cap - to_end - unread) & (cap - 1));
	test_ring_init(&t, cap, start);
	static struct seen s;
	memset(&s, 0, sizeof(s));

	for (uint64_t i = 0; i < unread / 8; i++)
		assert_true(test_ring_put(&t, 8, i));
	uint64_t head = t.ring->head;
	assert_int_equal(head & (cap - 1), cap - to_end);

	uint64_t pad = size > to_end ? to_end : 0;
	bool fits = unread + pad + size <= cap;
	if (unread == 0)
		assert_true(fits); /* any record of at most cap / 2 fits an empty ring */
	uint8_t before[1024];
	memcpy(before, t.data, cap);

	uint8_t *dst = ctp_ring_reserve(&t.prod, size);
	if (fits) {
		assert_non_null(dst);
		assert_ptr_equal(dst, t.data + (pad ? 0 : cap - to_end));
		test_rec_fill(dst, size, 1000);
		ctp_ring_commit(&t.prod);
		assert_int_equal(t.ring->head, head + pad + size);
		assert_int_equal(t.ring->dropped, 0);
		if (pad)
			assert_int_equal(t.data[cap - to_end + offsetof(struct ctp_rec, type)],
					 CTP_REC_PAD);
	} else {
		assert_null(dst);
		assert_int_equal(t.ring->dropped, 1);
		assert_int_equal(t.ring->head, head);
		assert_memory_equal(before, t.data, cap);
	}

	uint64_t bytes;
	assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_OK);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.n, unread / 8 + (fits ? 1 : 0));
	for (uint64_t i = 0; i < unread / 8; i++)
		assert_int_equal(s.seq[i], i);
	if (fits)
		assert_int_equal(s.seq[unread / 8], 1000);
	assert_int_equal(t.ring->tail, t.ring->head);
	test_ring_free(&t);
}

static void wrap_with_pad_at_every_alignment(void **state)
{
	(void)state;
	const uint64_t cap = 256;
	/* Counters from 0, and counters that pass 2^64 in the middle of the scenario. */
	const uint64_t bases[] = {0, 0 - cap};
	for (size_t b = 0; b < 2; b++) {
		for (uint64_t to_end = 8; to_end <= cap; to_end += 8) {
			for (uint32_t size = 8; size <= cap / 2; size += 8) {
				uint64_t pad = size > to_end ? to_end : 0;
				/* Exactly full after the record, then one 8-byte record short. */
				uint64_t exact = cap - pad - size;
				wrap_scenario(bases[b], cap, to_end, size, exact);
				wrap_scenario(bases[b], cap, to_end, size, exact + 8);
				/* Empty ring: a record of at most half the capacity always fits. */
				wrap_scenario(bases[b], cap, to_end, size, 0);
			}
		}
	}
}

static void oversized_record_is_dropped(void **state)
{
	(void)state;
	struct test_ring t;
	test_ring_init(&t, 256, 0);
	assert_null(ctp_ring_reserve(&t.prod, 264));
	assert_null(ctp_ring_reserve(&t.prod, 65528));
	assert_int_equal(t.ring->dropped, 2);
	assert_int_equal(t.ring->head, 0);
	/* The whole capacity in one record fits an empty ring at position 0. */
	assert_true(test_ring_put(&t, 256, 7));
	assert_int_equal(t.ring->head, 256);
	test_ring_free(&t);
}

/* Without a consumer the ring fills up; every attempt that returns NULL is counted once, and the
 * records that were accepted all come back intact: nothing unread was overwritten. */
static void full_ring_drops_and_counts_exactly(void **state)
{
	(void)state;
	struct test_ring t;
	test_ring_init(&t, 512, 0);
	static struct seen s;
	uint64_t seq = 0, nulls = 0, accepted = 0;

	for (int round = 0; round < 3; round++) {
		uint64_t accepted_this_round[256];
		uint64_t n_round = 0;
		for (int i = 0; i < 200; i++, seq++) {
			uint32_t size = 8 + 8 * (uint32_t)((seq * 7) % 12);
			if (test_ring_put(&t, size, seq)) {
				accepted++;
				accepted_this_round[n_round++] = seq;
			} else {
				nulls++;
			}
			assert_int_equal(t.ring->dropped, nulls);
			assert_true(t.ring->head - t.ring->tail <= t.capacity);
		}
		assert_true(nulls > 0);

		memset(&s, 0, sizeof(s));
		uint64_t bytes;
		assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_OK);
		assert_int_equal(s.bad, 0);
		assert_int_equal(s.n, n_round);
		for (uint64_t i = 0; i < n_round; i++)
			assert_int_equal(s.seq[i], accepted_this_round[i]);
	}
	assert_int_equal(accepted + t.ring->dropped, seq);
	test_ring_free(&t);
}

/* max_bytes stops the harvest after the record that reaches the budget; the next harvest
 * resumes with the following record. PAD bytes count towards the budget. */
static void consumer_budget_stops_and_resumes(void **state)
{
	(void)state;
	struct test_ring t;
	test_ring_init(&t, 1024, 1024 - 40); /* the fourth record needs a PAD */
	static struct seen s;
	for (uint64_t i = 0; i < 20; i++)
		assert_true(test_ring_put(&t, 32, i));
	uint64_t total = t.ring->head - t.ring->tail;
	assert_int_equal(total, 20 * 32 + 8); /* 20 records and an 8-byte PAD */

	memset(&s, 0, sizeof(s));
	uint64_t consumed = 0, bytes;
	uint64_t next = 0;
	int harvests = 0;
	while (t.ring->tail != t.ring->head) {
		uint64_t tail = t.ring->tail;
		size_t n_before = s.n;
		assert_int_equal(consume(&t, 100, &s, &bytes), CTP_RING_OK);
		assert_true(bytes >= 100 || t.ring->tail == t.ring->head);
		assert_true(bytes < 100 + 32);
		assert_int_equal(t.ring->tail, tail + bytes);
		assert_true(s.n > n_before);
		for (size_t i = n_before; i < s.n; i++)
			assert_int_equal(s.seq[i], next++);
		consumed += bytes;
		harvests++;
	}
	assert_int_equal(s.bad, 0);
	assert_int_equal(next, 20);
	assert_int_equal(consumed, total);
	assert_int_equal(harvests, 6); /* 104 (PAD included), 4 x 128, 32 */

	/* A budget of 1 byte reads exactly one record. */
	for (uint64_t i = 0; i < 3; i++)
		assert_true(test_ring_put(&t, 24, 100 + i));
	memset(&s, 0, sizeof(s));
	assert_int_equal(consume(&t, 1, &s, &bytes), CTP_RING_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(bytes, 24);
	assert_int_equal(s.seq[0], 100);
	test_ring_free(&t);
}

/* ---- corrupt rings ---- */

struct corrupt_case {
	const char *what;
	uint64_t tail, head;
	uint64_t rec_pos; /* where to put the record below, when size_field or type_pad */
	uint16_t size_field;
	bool put_rec;
	bool type_pad;
	size_t valid_before; /* valid 8-byte records written at tail before the bad one */
};

static void run_corrupt_case(const struct corrupt_case *c)
{
	const uint64_t cap = 256;
	struct test_ring t;
	test_ring_init(&t, cap, 0);
	static struct seen s;
	memset(&s, 0, sizeof(s));
	uint64_t pos = c->tail & (cap - 1);
	for (size_t i = 0; i < c->valid_before; i++, pos += 8)
		test_rec_fill(t.data + (pos & (cap - 1)), 8, i);
	if (c->put_rec) {
		struct ctp_rec *r = (struct ctp_rec *)(t.data + c->rec_pos);
		r->size = c->size_field;
		r->type = c->type_pad ? CTP_REC_PAD : TEST_REC_TYPE;
		r->nframes = 0;
		r->aux = 0;
	}
	t.ring->tail = c->tail;
	t.ring->head = c->head;

	uint64_t bytes;
	enum ctp_ring_status st = consume(&t, 0, &s, &bytes);
	if (st != CTP_RING_CORRUPT)
		fail_msg("%s: status %d, expected CTP_RING_CORRUPT", c->what, st);
	if (t.ring->tail != c->head)
		fail_msg("%s: tail %llu, expected head %llu", c->what,
			 (unsigned long long)t.ring->tail, (unsigned long long)c->head);
	if (s.bad != 0 || s.n != c->valid_before)
		fail_msg("%s: visited %zu good and %zu bad records, expected %zu good", c->what,
			 s.n, s.bad, c->valid_before);
	test_ring_free(&t);
}

static void corrupt_rings_are_skipped_to_head(void **state)
{
	(void)state;
	const struct corrupt_case cases[] = {
		{"head beyond tail + capacity", 64, 64 + 256 + 8, 0, 0, false, false, 0},
		{"head behind tail", 512, 8, 0, 0, false, false, 0},
		{"record size 0", 0, 32, 16, 0, true, false, 2},
		{"record size 4", 0, 32, 8, 4, true, false, 1},
		{"record size 12 (not a multiple of 8)", 0, 32, 0, 12, true, false, 0},
		{"record size 40 past head", 0, 32, 8, 40, true, false, 1},
		{"record size 24 past the end", 256 - 16, 256 + 64, 256 - 16, 24, true, false, 0},
		{"record size 65528 past everything", 0, 64, 0, 65528, true, false, 0},
		{"PAD running past head", 256 - 32, 256 - 8, 256 - 32, 0, true, true, 0},
		{"head 4 bytes into a record", 0, 20, 16, 8, false, false, 2},
		{"head 4 bytes past the last record", 0, 12, 0, 0, false, false, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

/* tail lives in the segment too, so the traced process can make it anything, including a value
 * that is not a multiple of 8. Records are multiples of 8 and start at multiples of 8, so such a
 * tail is impossible: the consumer must skip to head rather than hand its visitor a record whose
 * header (tail % 4 != 0) or 64-bit fields (tail % 8 == 4) are misaligned, which UBSan flags. */
static void misaligned_tail_is_corrupt(void **state)
{
	(void)state;
	const uint64_t tails[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		struct test_ring t;
		test_ring_init(&t, 256, 0);
		static struct seen s;
		memset(&s, 0, sizeof(s));
		/* What looks like a valid 8-byte record at the misaligned position (bytes, so that
		 * building it is not itself a misaligned store). */
		const uint8_t rec[8] = {8, 0, TEST_REC_TYPE, 0, 0, 0, 0, 0};
		memcpy(t.data + tails[i], rec, sizeof(rec));
		t.ring->tail = tails[i];
		t.ring->head = tails[i] + 8;
		uint64_t bytes;
		enum ctp_ring_status st = consume(&t, 0, &s, &bytes);
		if (st != CTP_RING_CORRUPT || s.n != 0 || t.ring->tail != t.ring->head)
			fail_msg("tail %llu: status %d, %zu records visited, tail %llu head %llu",
				 (unsigned long long)tails[i], st, s.n,
				 (unsigned long long)t.ring->tail,
				 (unsigned long long)t.ring->head);
		test_ring_free(&t);
	}
}

/* After a corrupt harvest the ring works again from head. */
static void ring_recovers_after_corruption(void **state)
{
	(void)state;
	struct test_ring t;
	test_ring_init(&t, 256, 0);
	static struct seen s;
	memset(&s, 0, sizeof(s));
	assert_true(test_ring_put(&t, 16, 1));
	t.data[0] = 3; /* size 3: impossible */
	uint64_t bytes;
	assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_CORRUPT);
	assert_int_equal(s.n, 0);
	assert_int_equal(t.ring->tail, 16);
	assert_true(test_ring_put(&t, 24, 2));
	assert_int_equal(consume(&t, 0, &s, &bytes), CTP_RING_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.seq[0], 2);
	test_ring_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_come_back_in_order),
		cmocka_unit_test(wrap_with_pad_at_every_alignment),
		cmocka_unit_test(oversized_record_is_dropped),
		cmocka_unit_test(full_ring_drops_and_counts_exactly),
		cmocka_unit_test(consumer_budget_stops_and_resumes),
		cmocka_unit_test(corrupt_rings_are_skipped_to_head),
		cmocka_unit_test(misaligned_tail_is_corrupt),
		cmocka_unit_test(ring_recovers_after_corruption),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

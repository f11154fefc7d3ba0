/* The collector's reorder stage: records of several rings (or of a hundred) come out merged in
 * time order, each ring's own order kept; records newer than the bound stay queued until a later
 * release; notes travel in order with their ring's records; every byte of a record comes out as it
 * went in; and a queue that cannot grow, out of memory, refuses the record and loses none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "collector/address_space.h"
#include "collector/reorder.h"
#include "test/collector/may_return_null.h"

/* What the emit callback saw: ring, type, timestamp (or the note's value), whole record. */
struct seen {
	uint32_t ring;
	uint8_t type;
	uint64_t ts_or_value;
	uint8_t bytes[80]; /* a switch record with 4 frames */
	uint16_t size;
};

struct log {
	struct seen items[4096];
	size_t n;
};

static void emit(void *ctx, uint32_t ring, const struct ctp_rec *rec)
{
	struct log *l = ctx;
	assert_true(l->n < sizeof(l->items) / sizeof(l->items[0]));
	struct seen *s = &l->items[l->n++];
	s->ring = ring;
	s->type = rec->type;
	s->size = rec->size;
	assert_true(rec->size <= sizeof(s->bytes));
	memcpy(s->bytes, rec, rec->size);
	if (rec->type == CTP_REORDER_LOSS || rec->type == CTP_REORDER_CORRUPT)
		s->ts_or_value = ((const struct ctp_reorder_note *)rec)->value;
	else if (rec->type == CTP_REC_THREAD)
		s->ts_or_value = ((const struct ctp_rec_thread *)rec)->ts;
	else
		s->ts_or_value = ((const struct ctp_rec_switch *)rec)->ts;
}

static void push_switch(struct ctp_reorder *r, uint32_t ring, uint64_t ts, uint64_t from,
			uint64_t to)
{
	struct ctp_rec_switch rec = {
		.h = {.size = sizeof(rec), .type = CTP_REC_SWITCH, .aux = CTP_HOW_SWAPCONTEXT},
		.ts = ts,
		.from = from,
		.to = to,
	};
	assert_true(ctp_reorder_push(r, ring, &rec.h));
}

/* Two rings, each in order by itself, interleaved in time: released all at once they come out
 * in one time order. */
static void merges_rings_in_time_order(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	uint64_t ring0[] = {10, 20, 30, 60, 70};
	uint64_t ring1[] = {5, 25, 26, 65, 80, 90};
	for (size_t i = 0; i < 5; i++)
		push_switch(&r, 0, ring0[i], 1, 2);
	for (size_t i = 0; i < 6; i++)
		push_switch(&r, 1, ring1[i], 3, 4);
	struct log l = {0};
	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	assert_int_equal(l.n, 11);
	uint64_t want[] = {5, 10, 20, 25, 26, 30, 60, 65, 70, 80, 90};
	uint32_t want_ring[] = {1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1};
	for (size_t i = 0; i < 11; i++) {
		assert_int_equal(l.items[i].ts_or_value, want[i]);
		assert_int_equal(l.items[i].ring, want_ring[i]);
	}
	assert_int_equal(r.queued_bytes, 0);
	ctp_reorder_free(&r);
}

/* A release up to a time lets out only what is not newer; the rest waits, in order, for the next
 * release, and records pushed meanwhile join the merge. */
static void holds_back_what_is_newer_than_the_bound(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	push_switch(&r, 0, 100, 1, 2);
	push_switch(&r, 0, 300, 2, 1);
	push_switch(&r, 1, 200, 3, 4);
	push_switch(&r, 1, 400, 4, 3);
	struct log l = {0};

	ctp_reorder_release(&r, 99, emit, &l);
	assert_int_equal(l.n, 0);
	assert_int_equal(r.queued_bytes, 4 * (8 + sizeof(struct ctp_rec_switch)));

	ctp_reorder_release(&r, 200, emit, &l); /* the bound itself is let out */
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].ts_or_value, 100);
	assert_int_equal(l.items[1].ts_or_value, 200);
	assert_int_equal(r.queued_bytes, 2 * (8 + sizeof(struct ctp_rec_switch)));

	/* A third ring brings something older than what still waits. */
	push_switch(&r, 2, 250, 5, 6);
	ctp_reorder_release(&r, 350, emit, &l);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.items[2].ts_or_value, 250);
	assert_int_equal(l.items[2].ring, 2);
	assert_int_equal(l.items[3].ts_or_value, 300);

	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	assert_int_equal(l.n, 5);
	assert_int_equal(l.items[4].ts_or_value, 400);
	assert_int_equal(r.queued_bytes, 0);
	ctp_reorder_free(&r);
}

/* Equal times: the ring's own order is kept, and nothing is lost or doubled. */
static void keeps_a_rings_order_at_equal_times(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	for (uint64_t k = 1; k <= 4; k++)
		push_switch(&r, 0, 50, k, k + 1);
	push_switch(&r, 1, 50, 100, 101);
	struct log l = {0};
	ctp_reorder_release(&r, 50, emit, &l);
	assert_int_equal(l.n, 5);
	uint64_t next_from = 1;
	for (size_t i = 0; i < l.n; i++) {
		const struct ctp_rec_switch *s = (const void *)l.items[i].bytes;
		if (l.items[i].ring == 0)
			assert_int_equal(s->from, next_from++);
	}
	assert_int_equal(next_from, 5);
	ctp_reorder_free(&r);
}

/* Notes and records of kinds without a clock take the time of the record before them in their
 * ring, so they come out right after it, never before it. */
static void notes_follow_their_rings_records(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	push_switch(&r, 0, 10, 1, 2);
	push_switch(&r, 0, 40, 2, 1);
	struct ctp_reorder_note loss = ctp_reorder_note(CTP_REORDER_LOSS, 17);
	assert_true(ctp_reorder_push(&r, 0, &loss.h));
	push_switch(&r, 1, 20, 3, 4);
	push_switch(&r, 1, 50, 4, 3);
	struct ctp_reorder_note corrupt = ctp_reorder_note(CTP_REORDER_CORRUPT, 2);
	assert_true(ctp_reorder_push(&r, 1, &corrupt.h));
	struct log l = {0};

	ctp_reorder_release(&r, 45, emit, &l);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.items[2].ts_or_value, 40);
	assert_int_equal(l.items[3].type, CTP_REORDER_LOSS);
	assert_int_equal(l.items[3].ts_or_value, 17);
	assert_int_equal(l.items[3].ring, 0);

	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	assert_int_equal(l.n, 6);
	assert_int_equal(l.items[4].ts_or_value, 50);
	assert_int_equal(l.items[5].type, CTP_REORDER_CORRUPT);
	assert_int_equal(l.items[5].ts_or_value, 2);
	ctp_reorder_free(&r);
}

/* A record stamped before its ring's newest (the segment is untrusted) does not jump ahead of
 * what its ring wrote before it. */
static void a_record_out_of_order_keeps_its_place_in_its_ring(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	push_switch(&r, 0, 100, 1, 2);
	push_switch(&r, 0, 30, 2, 1); /* claims to be older */
	push_switch(&r, 1, 50, 3, 4);
	struct log l = {0};
	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[0].ts_or_value, 50);
	assert_int_equal(l.items[1].ts_or_value, 100);
	assert_int_equal(l.items[2].ts_or_value, 30); /* after its ring's earlier record */
	ctp_reorder_free(&r);
}

/* Records of every length (with stack frames) come out byte for byte, also after the queue
 * grew many times and wrapped around its end: each release leaves the newest records queued,
 * a lag that now and then grows past what the queue holds, while it is wrapped. */
static void records_come_out_byte_for_byte(void **state)
{
	(void)state;
	struct ctp_reorder r = {0};
	enum { N = 20000 };
	static struct log l;
	uint64_t expect_seq = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t buf[10] = {0};
		struct ctp_rec_switch *s = (struct ctp_rec_switch *)buf;
		uint8_t nframes = (uint8_t)(i % 5);
		s->h = (struct ctp_rec){.size = (uint16_t)(sizeof(*s) + 8 * nframes),
					.type = CTP_REC_SWITCH,
					.nframes = nframes};
		s->ts = 1000 + i;
		s->from = i;
		s->to = ~i;
		for (uint8_t f = 0; f < nframes; f++)
			s->frames[f] = i * 16 + f;
		assert_true(ctp_reorder_push(&r, (uint32_t)(i % 3), &s->h));
		if (i % 997 == 996) { /* drain now and then, as the converter does */
			l.n = 0;
			uint64_t lag = i / 997 % 4 == 3 ? 2600 : 300;
			ctp_reorder_release(&r, 1000 + (i > lag ? i - lag : 0), emit, &l);
			for (size_t k = 0; k < l.n; k++, expect_seq++) {
				const struct ctp_rec_switch *o = (const void *)l.items[k].bytes;
				assert_int_equal(o->from, expect_seq);
				assert_int_equal(o->to, ~expect_seq);
				assert_int_equal(o->ts, 1000 + expect_seq);
				assert_int_equal(o->h.nframes, expect_seq % 5);
				assert_int_equal(o->h.size, sizeof(*o) + 8 * (expect_seq % 5));
				for (uint8_t f = 0; f < o->h.nframes; f++)
					assert_int_equal(o->frames[f], expect_seq * 16 + f);
			}
		}
	}
	/* Fewer than the log holds are left. */
	l.n = 0;
	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	expect_seq += l.n;
	assert_int_equal(expect_seq, N);
	assert_int_equal(r.queued_bytes, 0);
	ctp_reorder_free(&r);
}

/* Many rings (a program of many threads), released in steps while records keep coming: each
 * step lets out exactly the records not newer than its bound, oldest first and, at equal
 * times, the lower ring first; each ring's own order is kept. */
static void merges_many_rings(void **state)
{
	(void)state;
	enum { RINGS = 100, PER_RING = 10 };
	struct ctp_reorder r = {0};
	struct log l = {0};
	uint64_t next_ts[RINGS] = {0};
	uint64_t seed = 12345;
	uint32_t pushed[RINGS] = {0};
	size_t released = 0;
	for (uint64_t until = 100; until <= 1000; until += 100) {
		/* Each ring gets one more record, at a time of its own past the last bound. */
		for (uint32_t ring = 0; ring < RINGS; ring++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if (next_ts[ring] < until - 100)
				next_ts[ring] = until - 100;
			next_ts[ring] +=
				(seed >> 33) % 150; /* equal times too, and some past `until` */
			push_switch(&r, ring, next_ts[ring], ring, pushed[ring]++);
		}
		size_t before = l.n;
		ctp_reorder_release(&r, until, emit, &l);
		for (size_t i = before; i < l.n; i++) {
			assert_true(l.items[i].ts_or_value <= until);
			if (i > before) {
				const struct seen *a = &l.items[i - 1], *b = &l.items[i];
				assert_true(
					a->ts_or_value < b->ts_or_value ||
					(a->ts_or_value == b->ts_or_value && a->ring <= b->ring));
			}
		}
		released = l.n;
		/* What waits is newer than the bound. */
		for (uint32_t ring = 0; ring < RINGS; ring++) {
			const struct ctp_reorder_queue *q = &r.q[ring];
			if (q->first) {
				uint64_t ts;
				memcpy(&ts, q->first->data + q->first->head, sizeof(ts));
				assert_true(ts > until);
			}
		}
	}
	ctp_reorder_release(&r, UINT64_MAX, emit, &l);
	assert_int_equal(l.n, RINGS * PER_RING);
	assert_true(released <= l.n);
	uint32_t seen[RINGS] = {0};
	for (size_t i = 0; i < l.n; i++) {
		const struct ctp_rec_switch *sw = (const void *)l.items[i].bytes;
		assert_int_equal(sw->from, l.items[i].ring);
		assert_int_equal(sw->to, seen[l.items[i].ring]++); /* the ring's own order */
	}
	assert_int_equal(r.queued_bytes, 0);
	ctp_reorder_free(&r);
}

/* Lets everything out in steps of the log's size, checking that records 1, 2, ... come out in
 * order; returns how many came out. */
static uint64_t release_all_in_order(struct ctp_reorder *r)
{
	static struct log l; /* static: its 4096 items would crowd the stack */
	uint64_t out = 0;
	while (r->nheap > 0) {
		l.n = 0;
		ctp_reorder_release(r, out + 4000, emit, &l);
		assert_true(l.n > 0); /* the next 4000 are queued: none coming out would loop */
		for (size_t i = 0; i < l.n; i++)
			assert_int_equal(l.items[i].ts_or_value, out + i + 1);
		out += l.n;
	}
	return out;
}

/* Pushes switch records stamped 1, 2, ... over `rings` rings until the queue refuses one, or
 * `most` are in; returns how many went in. */
static uint64_t push_until_refused(struct ctp_reorder *r, uint32_t rings, uint64_t most)
{
	uint64_t pushed = 0;
	for (; pushed < most; pushed++) {
		struct ctp_rec_switch rec = {.h = {.size = sizeof(rec),
						   .type = CTP_REC_SWITCH,
						   .aux = CTP_HOW_SWAPCONTEXT},
					     .ts = pushed + 1};
		if (!ctp_reorder_push(r, (uint32_t)(pushed % rings), &rec.h))
			break;
	}
	return pushed;
}

/* Under an address-space limit that leaves no room for more of the queue, a push that needs more
 * fails and queues nothing (the collector aborted there, out of memory); what was queued comes
 * out whole and in order, and the emptied queue takes records again in the room it has. */
static void a_queue_that_cannot_grow_refuses_and_keeps_the_rest(void **state)
{
	(void)state;
	enum { MOST = 1000000 }; /* 40 MB of records: far past the room */
	struct ctp_reorder r = {0};
	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	/* Room for one chunk and not two. */
	struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + CTP_REORDER_CHUNK_BYTES * 3 / 2,
			       .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	uint64_t pushed = push_until_refused(&r, 1, MOST);
	size_t queued = r.queued_bytes;
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_true(pushed > 0);
	assert_true(pushed < MOST);
	assert_int_equal(queued, pushed * (sizeof(uint64_t) + sizeof(struct ctp_rec_switch)));
	assert_int_equal(release_all_in_order(&r), pushed);
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	struct ctp_rec_switch again = {
		.h = {.size = sizeof(again), .type = CTP_REC_SWITCH, .aux = CTP_HOW_SWAPCONTEXT},
		.ts = 9999};
	bool taken = ctp_reorder_push(&r, 0, &again.h);
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_true(taken);
	ctp_reorder_free(&r);
}

/* Under an address-space limit the queue takes records until about all the room is used: it grows
 * by one chunk at a time. (As one buffer that doubled, it needed the old and the new at once and
 * refused records with a third of the room still free.) */
static void a_queue_under_a_limit_uses_nearly_all_the_room(void **state)
{
	(void)state;
	enum { ROOM = 4 << 20, MOST = 1000000 };
	struct ctp_reorder r = {0};
	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + ROOM, .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	uint64_t pushed = push_until_refused(&r, 4, MOST);
	size_t queued = r.queued_bytes;
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	print_message("queued %zu bytes with %d of room\n", queued, ROOM);
	assert_true(pushed < MOST);
	assert_true(queued > ROOM / 10 * 8);
	assert_int_equal(release_all_in_order(&r), pushed);
	/* Let out, the queue keeps a few chunks for the next burst, not the burst's. */
	assert_true(r.held_peak >= queued);
	assert_true(r.held_bytes <= CTP_REORDER_SPARE_MAX * CTP_REORDER_CHUNK_BYTES);
	ctp_reorder_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merges_rings_in_time_order),
		cmocka_unit_test(holds_back_what_is_newer_than_the_bound),
		cmocka_unit_test(keeps_a_rings_order_at_equal_times),
		cmocka_unit_test(notes_follow_their_rings_records),
		cmocka_unit_test(a_record_out_of_order_keeps_its_place_in_its_ring),
		cmocka_unit_test(records_come_out_byte_for_byte),
		cmocka_unit_test(merges_many_rings),
		cmocka_unit_test(a_queue_that_cannot_grow_refuses_and_keeps_the_rest),
		cmocka_unit_test(a_queue_under_a_limit_uses_nearly_all_the_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

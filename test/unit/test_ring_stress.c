/* The event ring under concurrency: one producer thread writing as fast as it can, one consumer
 * thread harvesting at the same time. Every record the consumer sees must be whole (its checksum
 * holds: the producer never wrote into unread bytes, and the consumer saw every byte the
 * producer published), sequence numbers must increase, and loss must be exact:
 * consumed + dropped == written. Run under TSan, this also checks the memory orders. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "ctp/atomics.h"
#include "ring_fixture.h"

/* As many records as keep each test well under a second: TSan slows both threads by 10-20x. */
#if defined(__SANITIZE_THREAD__)
enum { RECORDS = 200000 };
#elif defined(__SANITIZE_ADDRESS__)
enum { RECORDS = 1000000 };
#else
enum { RECORDS = 2000000 };
#endif

struct stress {
	struct test_ring t;
	uint64_t records; /* the producer writes sequence numbers 0 .. records - 1 */
	uint32_t max_size;
	uint32_t done;		 /* the producer has finished; release/acquire */
	pthread_barrier_t start; /* so that the two really run at the same time */

	/* the consumer's findings */
	uint64_t consumed;
	uint64_t bad; /* records failing their self-check */
	uint64_t out_of_order;
	uint64_t next_seq; /* lowest sequence number still acceptable */
	uint64_t harvests; /* read by the producer: relaxed */
	int corrupt;
};

static void *producer(void *arg)
{
	struct stress *st = arg;
	uint64_t x = 0x2545F4914F6CDD1Dull;
	pthread_barrier_wait(&st->start);
	/* Start once the consumer is running, so that the two overlap even on a loaded machine. */
	while (CTP_LOAD_RELAXED(&st->harvests) == 0)
		sched_yield();
	for (uint64_t seq = 0; seq < st->records; seq++) {
		x ^= x << 13; /* xorshift: sizes that vary without a pattern the ring could hide */
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t size = 8 * (1 + (uint32_t)(x % (st->max_size / 8)));
		test_ring_put(&st->t, size, seq);
	}
	CTP_STORE_RELEASE(&st->done, 1);
	return NULL;
}

static void check_record(void *ctx, const struct ctp_rec *rec)
{
	struct stress *st = ctx;
	uint64_t seq;
	if (!test_rec_check(rec, &seq)) {
		st->bad++;
		return;
	}
	if (seq < st->next_seq || seq >= st->records)
		st->out_of_order++;
	else
		st->next_seq = seq + 1;
	st->consumed++;
}

static void *consumer(void *arg)
{
	struct stress *st = arg;
	pthread_barrier_wait(&st->start);
	for (;;) {
		uint32_t done = CTP_LOAD_ACQUIRE(&st->done);
		uint64_t bytes;
		/* Alternate between unlimited harvests and ones cut short by the budget. */
		uint64_t budget = (st->harvests & 1) ? 0 : st->t.capacity / 4;
		if (ctp_ring_consume(st->t.ring, st->t.data, st->t.capacity, budget, check_record,
				     st, &bytes) != CTP_RING_OK)
			st->corrupt++;
		CTP_STORE_RELAXED(&st->harvests, st->harvests + 1);
		/* done was read before this harvest loaded head: everything is in. */
		if (done && st->t.ring->tail == CTP_LOAD_ACQUIRE(&st->t.ring->head))
			break;
		if (bytes == 0)
			sched_yield(); /* two cores shared with the producer and the sanitizer */
	}
	return NULL;
}

static void run_stress(uint64_t capacity, uint32_t max_size, uint64_t records)
{
	static struct stress st;
	memset(&st, 0, sizeof(st));
	test_ring_init(&st.t, capacity, 0);
	assert_true(records < (1ull << 32)); /* 8-byte records carry 32 bits of it */
	st.records = records;
	st.max_size = max_size;

	pthread_t prod, cons;
	assert_int_equal(pthread_barrier_init(&st.start, NULL, 2), 0);
	assert_int_equal(pthread_create(&cons, NULL, consumer, &st), 0);
	assert_int_equal(pthread_create(&prod, NULL, producer, &st), 0);
	assert_int_equal(pthread_join(prod, NULL), 0);
	assert_int_equal(pthread_join(cons, NULL), 0);
	pthread_barrier_destroy(&st.start);

	uint64_t dropped = CTP_LOAD_RELAXED(&st.t.ring->dropped);
	print_message("capacity %llu: %llu records, %llu consumed, %llu dropped, %llu harvests\n",
		      (unsigned long long)capacity, (unsigned long long)records,
		      (unsigned long long)st.consumed, (unsigned long long)dropped,
		      (unsigned long long)st.harvests);
	assert_int_equal(st.corrupt, 0);
	assert_int_equal(st.bad, 0);
	assert_int_equal(st.out_of_order, 0);
	assert_int_equal(st.consumed + dropped, records);
	assert_true(st.consumed > 0);
	test_ring_free(&st.t);
}

/* A ring that holds a handful of records: most are dropped, and the wrap happens constantly. */
static void tiny_ring_loses_exactly_what_it_drops(void **state)
{
	(void)state;
	run_stress(128, 64, RECORDS);
}

/* A ring large enough that the consumer mostly keeps up. */
static void large_ring_delivers_intact_records(void **state)
{
	(void)state;
	run_stress(64 * 1024, 256, RECORDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_ring_loses_exactly_what_it_drops),
		cmocka_unit_test(large_ring_delivers_intact_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

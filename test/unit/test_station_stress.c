/* The station seqlock under concurrency: writers update a station as fast as they can with
 * every field and frame set to one counter value, a reader copies it at the same time. Every
 * copy ctp_station_read calls good must be whole (all fields equal) and no older than the one
 * before; once the writers are done, a read must succeed with the final value. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "station_fixture.h"

#if defined(__SANITIZE_THREAD__)
enum { UPDATES = 100000 };
#else
enum { UPDATES = 500000 };
#endif
enum { DEPTH = 16, HANDOVER_EVERY = 500 };

struct stress {
	struct ctp_station *s;
	uint32_t writers; /* 1, or 2 taking turns the way a migrating coroutine does */
	uint32_t turn;	  /* which writer may update now; release/acquire */
	uint64_t next;	  /* the next value to write, shared by the writers in turn */
	uint32_t done;	  /* release/acquire */
	pthread_barrier_t start;

	/* the reader's findings */
	uint64_t reads, good, torn, backwards, last;
};

struct writer_arg {
	struct stress *st;
	uint32_t id;
};

static void *writer(void *arg)
{
	struct writer_arg *w = arg;
	struct stress *st = w->st;
	pthread_barrier_wait(&st->start);
	for (;;) {
		/* Acquire pairs with the other writer's release: we see its last seq and next. */
		while (CTP_LOAD_ACQUIRE(&st->turn) != w->id)
			sched_yield();
		if (st->next > UPDATES)
			break;
		for (int i = 0; i < HANDOVER_EVERY && st->next <= UPDATES; i++)
			test_station_set_all(st->s, DEPTH, st->next++);
		if (st->writers > 1)
			CTP_STORE_RELEASE(&st->turn, (w->id + 1) % st->writers);
	}
	if (st->writers > 1)
		CTP_STORE_RELEASE(&st->turn, (w->id + 1) % st->writers); /* let the other one out */
	/* One atomic add: two writers finish at nearly the same time, and a load and a store of
	 * each could both read 0 and both write 1, leaving the reader waiting for good. */
	__atomic_fetch_add(&st->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *arg)
{
	struct stress *st = arg;
	struct ctp_station_snapshot snap;
	pthread_barrier_wait(&st->start);
	while (CTP_LOAD_ACQUIRE(&st->done) < st->writers) {
		st->reads++;
		if (!ctp_station_read(st->s, DEPTH, &snap))
			continue;
		st->good++;
		if (!test_snapshot_is_whole(&snap, DEPTH))
			st->torn++;
		else if (snap.coro < st->last)
			st->backwards++;
		else
			st->last = snap.coro;
	}
	return NULL;
}

static void run_stress(uint32_t writers)
{
	static struct stress st;
	memset(&st, 0, sizeof(st));
	st.s = test_station_new(DEPTH);
	test_station_set_all(st.s, DEPTH, 0); /* the reader may come first */
	st.writers = writers;
	st.next = 1;
	assert_int_equal(pthread_barrier_init(&st.start, NULL, writers + 1), 0);

	pthread_t r, w[2];
	struct writer_arg wa[2];
	assert_int_equal(pthread_create(&r, NULL, reader, &st), 0);
	for (uint32_t i = 0; i < writers; i++) {
		wa[i] = (struct writer_arg){&st, i};
		assert_int_equal(pthread_create(&w[i], NULL, writer, &wa[i]), 0);
	}
	for (uint32_t i = 0; i < writers; i++)
		assert_int_equal(pthread_join(w[i], NULL), 0);
	assert_int_equal(pthread_join(r, NULL), 0);
	pthread_barrier_destroy(&st.start);

	print_message("%u writer(s): %llu updates, %llu reads, %llu good, %llu torn\n", writers,
		      (unsigned long long)UPDATES, (unsigned long long)st.reads,
		      (unsigned long long)st.good, (unsigned long long)st.torn);
	assert_int_equal(st.torn, 0);
	assert_int_equal(st.backwards, 0);
	assert_int_equal(st.s->seq, 2ull * (UPDATES + 1));

	struct ctp_station_snapshot snap;
	assert_true(ctp_station_read(st.s, DEPTH, &snap));
	assert_true(test_snapshot_is_whole(&snap, DEPTH));
	assert_int_equal(snap.coro, UPDATES);
	free(st.s);
}

static void reader_never_sees_a_torn_station(void **state)
{
	(void)state;
	run_stress(1);
}

/* A coroutine that moves between threads: the new writer continues the old one's seq. */
static void writers_taking_turns_keep_the_seqlock_whole(void **state)
{
	(void)state;
	run_stress(2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_never_sees_a_torn_station),
		cmocka_unit_test(writers_taking_turns_keep_the_seqlock_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

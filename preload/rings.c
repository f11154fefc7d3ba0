/* Each thread produces into a ring of its own. A thread claims a ring left free by a thread
 * that exited before making a new one, so that short-lived threads do not grow the segment.
 *
 * Rings start small (CTP_RING_START_BYTES, or the configured size if that is smaller): most
 * threads of a program never switch a coroutine, and 200 of them with the full size would
 * reserve most of a gigabyte. A thread whose ring fills past half before the collector has read
 * it moves to a ring CTP_RING_GROWTH times bigger, up to the configured size; the old one is
 * read to its end by the collector and then serves a new thread. The THREAD record that opens
 * each ring names the thread.
 *
 * Two steps, 256 KiB, 4 MiB, 16 MiB by default. The second is the last resort before loss,
 * taken when 4 MiB are seven-eighths full, not half: on 2 cores where the program's threads
 * spin, the collector's harvester can go 8-12 ms without a CPU, and a thread switching flat out
 * writes 4 MiB in ~40 ms (Boost.Fiber ping-pong: 1 run in 10 lost events with 4 MiB rings).
 * But a ring bigger than it must be costs the program: its lines are colder when written again,
 * and both of that ping-pong's threads moving to 16 MiB at half made it 40% slower. */
#include <string.h>

#include "ctp/atomics.h"
#include "ctp/populate.h"
#include "ctp/ring.h"
#include "ctp/segment.h"
#include "preload/connection.h"
#include "preload/process.h"
#include "preload/rings.h"
#include "preload/segment.h"
#include "preload/stations.h"
#include "preload/threads.h"

enum { CTP_RING_START_BYTES = 256 * 1024, CTP_RING_GROWTH = 16 };

static uint64_t start_size(void)
{
	uint64_t full = ctp_proc.config.ring_bytes;
	return full < CTP_RING_START_BYTES ? full : CTP_RING_START_BYTES;
}

/* The size a ring of `capacity` bytes grows to: the configured size at most. */
static uint64_t grown_size(uint64_t capacity)
{
	uint64_t full = ctp_proc.config.ring_bytes;
	return capacity * CTP_RING_GROWTH < full ? capacity * CTP_RING_GROWTH : full;
}

struct ring_fill {
	uint32_t tid;
	uint64_t capacity;
};

static void fill_ring(void *block, uint64_t off, void *arg)
{
	struct ctp_ring *r = block;
	const struct ring_fill *f = arg;
	r->owner = f->tid;
	r->capacity = f->capacity;
	r->data_off = off + sizeof(struct ctp_ring);
}

struct claim {
	uint32_t tid;
	uint64_t min_capacity;
	struct ctp_ring *ring;
};

static void try_claim(void *ctx, struct ctp_block *b)
{
	struct claim *c = ctx;
	if (c->ring || b->kind != CTP_BLOCK_RING)
		return;
	struct ctp_ring *r = (struct ctp_ring *)b;
	if (r->capacity < c->min_capacity)
		return;
	uint32_t free_owner = 0;
	/* Acquire pairs with the release in ctp_ring_detach: the last owner's head is visible. */
	if (__atomic_compare_exchange_n(&r->owner, &free_owner, c->tid, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		c->ring = r;
}

static void for_each_block(void (*fn)(void *ctx, struct ctp_block *b), void *ctx)
{
	uint64_t off = CTP_LOAD_ACQUIRE(&ctp_seg.hdr->blocks_head);
	while (off) {
		struct ctp_block *b = ctp_segment_ptr(off);
		fn(ctx, b);
		off = CTP_LOAD_RELAXED(&b->next);
	}
}

static void announce_thread(struct ctp_thread *t, uint64_t coro)
{
	struct ctp_rec_thread *rec = ctp_emit_reserve(t, sizeof(*rec));
	if (!rec)
		return;
	rec->h = (struct ctp_rec){.size = sizeof(*rec), .type = CTP_REC_THREAD};
	rec->tid = t->tid;
	rec->pad = 0;
	rec->coro = coro;
	rec->ts = ctp_now();
	ctp_emit_commit(t);
}

/* A free ring of at least `capacity` bytes, claimed for t, else a new one of exactly that. */
static struct ctp_ring *take_ring(struct ctp_thread *t, uint64_t capacity)
{
	struct claim c = {.tid = t->tid, .min_capacity = capacity};
	for_each_block(try_claim, &c);
	if (c.ring)
		return c.ring;
	struct ring_fill f = {.tid = t->tid, .capacity = capacity};
	uint64_t off = ctp_segment_alloc_block(CTP_BLOCK_RING, sizeof(struct ctp_ring) + capacity,
					       fill_ring, &f);
	return off ? ctp_segment_ptr(off) : NULL;
}

bool ctp_ring_attach(struct ctp_thread *t, uint64_t thread_coro)
{
	struct ctp_ring *r = take_ring(t, start_size());
	if (!r)
		return false;
	ctp_ring_producer_init(&t->ring, r, ctp_segment_ptr(r->data_off));
	announce_thread(t, thread_coro);
	return true;
}

void ctp_ring_detach(struct ctp_thread *t)
{
	if (!t->ring.ring)
		return;
	/* Release: every record we published is visible to the next owner. */
	CTP_STORE_RELEASE(&t->ring.ring->owner, 0);
	t->ring.ring = NULL;
}

/* A thread that grows its ring filled half of its ring before the collector read it: it will
 * write the new one through, 1,024 pages for 4 MiB. They are mapped now, in one call. */
static void map_ring_pages(struct ctp_ring *r)
{
	ctp_populate_write(ctp_segment_ptr(r->data_off), r->capacity);
}

/* Moves t to a bigger ring; false when none could be had (t keeps its ring). */
static bool grow_ring(struct ctp_thread *t)
{
	struct ctp_ring *r = take_ring(t, grown_size(t->ring.mask + 1));
	if (!r)
		return false;
	map_ring_pages(r);
	ctp_ring_detach(t);
	ctp_ring_producer_init(&t->ring, r, ctp_segment_ptr(r->data_off));
	announce_thread(t, CTP_LOAD_RELAXED(&ctp_station_at(t->self)->coro));
	return true;
}

/* Whether a ring of `capacity` holding `fill` unread bytes (more than half) is outgrown. */
static bool grow_now(uint64_t capacity, uint64_t fill)
{
	return capacity <= CTP_RING_START_BYTES || fill > capacity - capacity / 8;
}

void ctp_emit_wake_if_full(struct ctp_thread *t)
{
	uint64_t capacity = t->ring.mask + 1;
	uint64_t fill = ctp_ring_fill_fresh(&t->ring);
	if (fill > capacity / 2) {
		if (capacity < ctp_proc.config.ring_bytes && grow_now(capacity, fill) &&
		    grow_ring(t))
			return;
		CTP_FENCE_SEQ_CST();
		uint32_t sleeping = 1;
		if (CTP_LOAD_RELAXED(&ctp_seg.hdr->sleep_flag) == 1 &&
		    __atomic_compare_exchange_n(&ctp_seg.hdr->sleep_flag, &sleeping, 0, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			ctp_connection_wake();
	}
}

static void reset_ring(void *ctx, struct ctp_block *b)
{
	(void)ctx;
	if (b->kind != CTP_BLOCK_RING)
		return;
	struct ctp_ring *r = (struct ctp_ring *)b;
	r->owner = 0;
	r->head = 0;
	r->tail = 0;
	r->dropped = 0;
}

void ctp_rings_fork_child(struct ctp_thread *t)
{
	/* The records in the copied rings are the parent's, and the parent's collector reads
	 * them there: start every ring empty, and take one again for the only thread left. */
	for_each_block(reset_ring, NULL);
	t->ring.ring = NULL;
	if (!ctp_ring_attach(t, CTP_LOAD_RELAXED(&ctp_station_at(t->self)->coro)))
		t->state = CTP_THREAD_OFF;
}

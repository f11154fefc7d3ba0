/* Each thread produces into a ring of its own. A thread claims a ring left free by a thread
 * that exited before making a new one, so that short-lived threads do not grow the segment. */
#include <string.h>

#include "ctp/atomics.h"
#include "preload.h"

static void fill_ring(void *block, uint64_t off, void *arg)
{
	struct ctp_ring *r = block;
	uint32_t tid = *(uint32_t *)arg;
	r->owner = tid;
	r->capacity = ctp_proc.config.ring_bytes;
	r->data_off = off + sizeof(struct ctp_ring);
}

struct claim {
	uint32_t tid;
	struct ctp_ring *ring;
};

static void try_claim(void *ctx, struct ctp_block *b)
{
	struct claim *c = ctx;
	if (c->ring || b->kind != CTP_BLOCK_RING)
		return;
	struct ctp_ring *r = (struct ctp_ring *)b;
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

bool ctp_ring_attach(struct ctp_thread *t, uint64_t thread_coro)
{
	struct claim c = {.tid = t->tid};
	for_each_block(try_claim, &c);
	if (!c.ring) {
		uint64_t off = ctp_segment_alloc_block(
			CTP_BLOCK_RING, sizeof(struct ctp_ring) + ctp_proc.config.ring_bytes,
			fill_ring, &t->tid);
		if (!off)
			return false;
		c.ring = ctp_segment_ptr(off);
	}
	ctp_ring_producer_init(&t->ring, c.ring, ctp_segment_ptr(c.ring->data_off));
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

void ctp_emit_wake_if_full(struct ctp_thread *t)
{
	uint64_t half = (t->ring.mask + 1) / 2;
	if (ctp_ring_fill_fresh(&t->ring) > half) {
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

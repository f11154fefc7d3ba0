#include "collector/reorder.h"
#include "collector/rec_copy.h"
#include "ctp/populate.h"
#include "ctp/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void free_chunks(struct ctp_reorder_chunk *c)
{
	while (c) {
		struct ctp_reorder_chunk *next = c->next;
		munmap(c, CTP_REORDER_CHUNK_BYTES);
		c = next;
	}
}

void ctp_reorder_free(struct ctp_reorder *r)
{
	for (size_t i = 0; i < r->nq; i++)
		free_chunks(r->q[i].first);
	free_chunks(r->spare);
	free(r->q);
	free(r->heap);
	memset(r, 0, sizeof(*r));
}

static uint64_t head_ts(const struct ctp_reorder_queue *q)
{
	uint64_t ts;
	memcpy(&ts, q->first->data + q->first->head, sizeof(ts));
	return ts;
}

/* Whether ring a's next record goes out before ring b's: the older first, and at equal times
 * the lower ring. */
static bool goes_before(const struct ctp_reorder *r, uint32_t a, uint32_t b)
{
	uint64_t ta = head_ts(&r->q[a]), tb = head_ts(&r->q[b]);
	return ta < tb || (ta == tb && a < b);
}

static void sift_up(struct ctp_reorder *r, size_t i)
{
	uint32_t ring = r->heap[i];
	while (i > 0 && goes_before(r, ring, r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = ring;
}

static void sift_down(struct ctp_reorder *r, size_t i)
{
	uint32_t ring = r->heap[i];
	for (size_t child; (child = 2 * i + 1) < r->nheap; i = child) {
		if (child + 1 < r->nheap && goes_before(r, r->heap[child + 1], r->heap[child]))
			child++;
		if (!goes_before(r, r->heap[child], ring))
			break;
		r->heap[i] = r->heap[child];
	}
	r->heap[i] = ring;
}

/* Ring `ring`'s queue has just received its first record. */
static void heap_add(struct ctp_reorder *r, uint32_t ring)
{
	if (r->nheap == r->heap_cap) {
		r->heap_cap = r->heap_cap ? 2 * r->heap_cap : 8;
		r->heap = ctp_xrealloc(r->heap, r->heap_cap * sizeof(*r->heap));
	}
	r->heap[r->nheap++] = ring;
	sift_up(r, r->nheap - 1);
}

static struct ctp_reorder_queue *queue(struct ctp_reorder *r, uint32_t ring)
{
	if (ring >= r->nq) {
		size_t n = ring + 1;
		r->q = ctp_xrealloc(r->q, n * sizeof(*r->q));
		memset(r->q + r->nq, 0, (n - r->nq) * sizeof(*r->q));
		r->nq = n;
	}
	return &r->q[ring];
}

/* An empty chunk, a spare one if there is; NULL when there is no memory for a new one. */
static struct ctp_reorder_chunk *take_chunk(struct ctp_reorder *r)
{
	struct ctp_reorder_chunk *c = r->spare;
	if (c) {
		r->spare = c->next;
		r->nspare--;
	} else {
		/* A mapping of its own, not malloc's: an address-space limit sees every chunk (the
		 * sanitizers' allocators take blocks this small from space reserved at start), and
		 * a chunk let go goes back to the kernel. Its pages are populated in the same call:
		 * each would be a fault (~13 us on a small VM, 3 ns a byte). */
		c = ctp_map_populated(CTP_REORDER_CHUNK_BYTES);
		if (!c)
			return NULL;
		r->held_bytes += CTP_REORDER_CHUNK_BYTES;
		if (r->held_bytes > r->held_peak)
			r->held_peak = r->held_bytes;
	}
	c->next = NULL;
	c->head = c->tail = 0;
	return c;
}

/* A chunk read to its end: kept as a spare while there are few, else unmapped. */
static void give_chunk(struct ctp_reorder *r, struct ctp_reorder_chunk *c)
{
	if (r->nspare >= CTP_REORDER_SPARE_MAX) {
		r->held_bytes -= CTP_REORDER_CHUNK_BYTES;
		munmap(c, CTP_REORDER_CHUNK_BYTES);
		return;
	}
	c->next = r->spare;
	r->spare = c;
	r->nspare++;
}

/* Room for an item of `need` bytes at the end of the queue, a chunk added when the last has
 * none; returns where, or NULL when there is no memory for one. */
static uint8_t *item_room(struct ctp_reorder *r, struct ctp_reorder_queue *q, size_t need)
{
	struct ctp_reorder_chunk *last = q->last;
	if (!last || CTP_REORDER_CHUNK_DATA - last->tail < need) {
		struct ctp_reorder_chunk *c = take_chunk(r);
		if (!c)
			return NULL;
		if (last)
			last->next = c;
		else
			q->first = c;
		q->last = last = c;
	}
	return last->data + last->tail;
}

bool ctp_reorder_push(struct ctp_reorder *r, uint32_t ring, const struct ctp_rec *rec)
{
	struct ctp_reorder_queue *q = queue(r, ring);
	bool was_empty = q->first == NULL;
	uint64_t ts = q->newest;
	/* A record older than its ring's newest (it cannot be, but the segment is untrusted) is
	 * queued as of the newest, so that the ring's order is kept. */
	if (ctp_rec_ts(rec, &ts) && ts < q->newest)
		ts = q->newest;
	size_t need = sizeof(uint64_t) + rec->size;
	uint8_t *at = item_room(r, q, need);
	if (!at)
		return false;
	memcpy(at, &ts, sizeof(ts));
	ctp_rec_copy(at + sizeof(ts), rec, rec->size);
	q->last->tail += need;
	q->newest = ts;
	r->queued_bytes += need;
	if (was_empty)
		heap_add(r, ring);
	return true;
}

void ctp_reorder_release(struct ctp_reorder *r, uint64_t until, ctp_reorder_emit_fn emit, void *ctx)
{
	while (r->nheap > 0) {
		uint32_t ring = r->heap[0];
		struct ctp_reorder_queue *q = &r->q[ring];
		if (head_ts(q) > until)
			return;
		struct ctp_reorder_chunk *c = q->first;
		const struct ctp_rec *rec =
			(const struct ctp_rec *)(c->data + c->head + sizeof(uint64_t));
		size_t size = sizeof(uint64_t) + rec->size;
		emit(ctx, ring, rec);
		c->head += size;
		r->queued_bytes -= size;
		if (c->head == c->tail) { /* read to its end: the last is full, or empty */
			q->first = c->next;
			if (!q->first)
				q->last = NULL;
			give_chunk(r, c);
		}
		if (!q->first)
			r->heap[0] = r->heap[--r->nheap];
		if (r->nheap > 0)
			sift_down(r, 0);
	}
}

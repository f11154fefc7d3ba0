#include "collector/reorder.h"
#include "collector/rec_copy.h"
#include "ctp/populate.h"
#include "ctp/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctp_reorder_free(struct ctp_reorder *r)
{
	for (size_t i = 0; i < r->nq; i++)
		free(r->q[i].buf);
	free(r->q);
	free(r->heap);
	memset(r, 0, sizeof(*r));
}

static uint64_t head_ts(const struct ctp_reorder_queue *q)
{
	uint64_t ts;
	memcpy(&ts, q->buf + q->head, sizeof(ts));
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

/* Room for an item of `need` bytes at q->tail, the ring grown when it has none; returns where,
 * or NULL when there is no memory to grow it. */
static uint8_t *item_room(struct ctp_reorder_queue *q, size_t need)
{
	bool wrapped = q->tail < q->head;
	if (wrapped ? q->head - q->tail > need : q->cap - q->tail >= need)
		return q->buf + q->tail;
	/* tail never catches up with head: wrapped, tail == head would read as empty. */
	if (!wrapped && q->head > need) {
		q->end = q->tail;
		q->tail = 0;
		return q->buf;
	}
	/* Full: into a buffer twice the size, the items in one piece at its front. Every new page
	 * is a fault (~13 us on a small VM, 3 ns a byte), so they are mapped ahead in one call
	 * (under 1 ns a byte). */
	size_t used = wrapped ? (q->end - q->head) + q->tail : q->tail - q->head;
	size_t cap = q->cap ? 2 * q->cap : 64 * 1024;
	while (used + need > cap)
		cap *= 2;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return NULL;
	ctp_populate_write(buf + used, cap - used);
	if (wrapped) {
		memcpy(buf, q->buf + q->head, q->end - q->head);
		memcpy(buf + (q->end - q->head), q->buf, q->tail);
	} else if (used) { /* a first buffer has nothing to copy, and no old one */
		memcpy(buf, q->buf + q->head, used);
	}
	free(q->buf);
	q->buf = buf;
	q->cap = cap;
	q->head = 0;
	q->tail = used;
	return q->buf + q->tail;
}

bool ctp_reorder_push(struct ctp_reorder *r, uint32_t ring, const struct ctp_rec *rec)
{
	struct ctp_reorder_queue *q = queue(r, ring);
	bool was_empty = q->head == q->tail;
	uint64_t ts = q->newest;
	/* A record older than its ring's newest (it cannot be, but the segment is untrusted) is
	 * queued as of the newest, so that the ring's order is kept. */
	if (ctp_rec_ts(rec, &ts) && ts < q->newest)
		ts = q->newest;
	size_t need = sizeof(uint64_t) + rec->size;
	uint8_t *at = item_room(q, need);
	if (!at)
		return false;
	memcpy(at, &ts, sizeof(ts));
	ctp_rec_copy(at + sizeof(ts), rec, rec->size);
	q->tail += need;
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
		const struct ctp_rec *rec =
			(const struct ctp_rec *)(q->buf + q->head + sizeof(uint64_t));
		size_t size = sizeof(uint64_t) + rec->size;
		emit(ctx, ring, rec);
		q->head += size;
		r->queued_bytes -= size;
		if (q->head == q->tail) {
			q->head = q->tail = 0;
			r->heap[0] = r->heap[--r->nheap];
		} else if (q->tail < q->head && q->head == q->end) {
			q->head = 0; /* the back is read: on to the front */
		}
		if (r->nheap > 0)
			sift_down(r, 0);
	}
}

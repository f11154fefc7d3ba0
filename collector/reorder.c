#include "collector/reorder.h"
#include "ctp/populate.h"
#include "ctp/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctp_reorder_free(struct ctp_reorder *r)
{
	for (size_t i = 0; i < r->nq; i++)
		free(r->q[i].buf);
	free(r->q);
	memset(r, 0, sizeof(*r));
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

static void append(struct ctp_reorder *r, uint32_t ring, const struct ctp_rec *rec)
{
	struct ctp_reorder_queue *q = queue(r, ring);
	uint64_t ts = q->newest;
	/* A record older than its ring's newest (it cannot be, but the segment is untrusted) is
	 * queued as of the newest, so that the ring's order is kept. */
	if (ctp_rec_ts(rec, &ts) && ts < q->newest)
		ts = q->newest;
	size_t need = sizeof(uint64_t) + rec->size;
	if (q->tail + need > q->cap) {
		/* Move the unread items to the front, unless that frees less than a sixteenth of
		 * what it moves: then the queue grows. Growing is dearer than it looks, every new
		 * page a fault (~13 us on a small VM, 3 ns a byte, against ~0.1 ns a byte moved;
		 * mapped ahead in one call, below, under 1 ns a byte), but a queue whose front was
		 * barely read would otherwise move all of its items at every append. */
		if (q->head > 0 && q->head * 16 >= q->tail - q->head) {
			memmove(q->buf, q->buf + q->head, q->tail - q->head);
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail + need > q->cap) {
			size_t cap = q->cap ? q->cap : 64 * 1024;
			while (q->tail + need > cap)
				cap *= 2;
			q->buf = ctp_xrealloc(q->buf, cap);
			ctp_populate_write(q->buf + q->tail, cap - q->tail);
			q->cap = cap;
		}
	}
	memcpy(q->buf + q->tail, &ts, sizeof(ts));
	memcpy(q->buf + q->tail + sizeof(ts), rec, rec->size);
	q->tail += need;
	q->newest = ts;
	r->queued_bytes += need;
}

void ctp_reorder_push(struct ctp_reorder *r, uint32_t ring, const struct ctp_rec *rec)
{
	append(r, ring, rec);
}

void ctp_reorder_push_note(struct ctp_reorder *r, uint32_t ring, uint8_t type, uint64_t value)
{
	struct ctp_reorder_note note = {.h = {.size = sizeof(note), .type = type}, .value = value};
	append(r, ring, &note.h);
}

static uint64_t head_ts(const struct ctp_reorder_queue *q)
{
	uint64_t ts;
	memcpy(&ts, q->buf + q->head, sizeof(ts));
	return ts;
}

void ctp_reorder_release(struct ctp_reorder *r, uint64_t until, ctp_reorder_emit_fn emit, void *ctx)
{
	for (;;) {
		/* The oldest head among the rings: a scan, since a process has few threads. */
		struct ctp_reorder_queue *best = NULL;
		uint32_t best_ring = 0;
		for (size_t i = 0; i < r->nq; i++) {
			struct ctp_reorder_queue *q = &r->q[i];
			if (q->head == q->tail || head_ts(q) > until)
				continue;
			if (!best || head_ts(q) < head_ts(best)) {
				best = q;
				best_ring = (uint32_t)i;
			}
		}
		if (!best)
			return;
		const struct ctp_rec *rec =
			(const struct ctp_rec *)(best->buf + best->head + sizeof(uint64_t));
		size_t size = sizeof(uint64_t) + rec->size;
		emit(ctx, best_ring, rec);
		best->head += size;
		r->queued_bytes -= size;
		if (best->head == best->tail)
			best->head = best->tail = 0;
	}
}

/* The per-thread event ring: single producer (the traced thread), single consumer (the
 * collector). The producer never blocks and never overwrites unread bytes: a record that does not
 * fit is dropped and counted in ring->dropped. Protocol and memory orders: ctp/CTP.md "Rings". */
#ifndef CTP_RING_H
#define CTP_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"

/* The producer's private view of its ring (kept in the thread's TLS, not in the segment). */
struct ctp_ring_producer {
	struct ctp_ring *ring;
	uint8_t *data;
	uint64_t mask;	      /* capacity - 1 */
	uint64_t head;	      /* our own copy of ring->head */
	uint64_t cached_tail; /* last tail seen; re-read only when the ring looks full */
	uint32_t pending;     /* bytes reserved by the last successful reserve, PAD included */
};

void ctp_ring_producer_init(struct ctp_ring_producer *p, struct ctp_ring *ring, uint8_t *data);

/* The producer side is inline: it runs on every context switch of the traced program. */

enum { CTP_RING_PREFETCH_AHEAD = 1024 }; /* see ctp_ring_commit */

/* Room for a record of `size` bytes (a multiple of 8, at most 65528), contiguous in memory.
 * Returns NULL, and counts one dropped record, when the consumer has not made room. */
static inline void *ctp_ring_reserve(struct ctp_ring_producer *p, uint32_t size)
{
	uint64_t capacity = p->mask + 1;
	uint64_t pos = p->head & p->mask;
	uint64_t to_end = capacity - pos;
	/* A record never wraps: if it does not fit before the end, the end becomes a PAD. */
	uint64_t pad = size > to_end ? to_end : 0;
	uint64_t need = pad + size;

	if (__builtin_expect(p->head + need - p->cached_tail > capacity, 0)) {
		/* Acquire pairs with the consumer's release of tail: the bytes it freed are no
		 * longer read once we see the new tail. */
		p->cached_tail = CTP_LOAD_ACQUIRE(&p->ring->tail);
		if (p->head + need - p->cached_tail > capacity) {
			CTP_STORE_RELAXED(&p->ring->dropped,
					  CTP_LOAD_RELAXED(&p->ring->dropped) + 1);
			return NULL;
		}
	}
	if (pad) {
		struct ctp_rec *filler = (struct ctp_rec *)(p->data + pos);
		filler->size = 0; /* a PAD always runs to the end of the data */
		filler->type = CTP_REC_PAD;
		filler->nframes = 0;
		filler->aux = 0;
	}
	p->pending = (uint32_t)need;
	return p->data + ((p->head + pad) & p->mask);
}

/* Publishes the record of the last successful reserve. */
static inline void ctp_ring_commit(struct ctp_ring_producer *p)
{
	p->head += p->pending;
	p->pending = 0;
	/* Release: the record's bytes are visible before the consumer sees the new head. */
	CTP_STORE_RELEASE(&p->ring->head, p->head);
	/* A ring the collector lags behind grows to megabytes, past the core's own caches, and a
	 * record written to a line that is not there waits for it: with a Boost.Fiber program on
	 * two threads, stores into the record were a fifth of the switch hook's time. Asking for
	 * the line CTP_RING_PREFETCH_AHEAD bytes on, about twenty records before it is written,
	 * made that program's traced runs 5-7% faster; single-thread switching no slower
	 * (docs/performance.md). A hint: it changes nothing the program or the collector can
	 * see. */
	__builtin_prefetch(&p->data[(p->head + CTP_RING_PREFETCH_AHEAD) & p->mask], 1, 3);
}

/* Bytes published and not yet consumed, as the producer last saw the consumer's tail: an
 * overestimate, free of any shared read. */
static inline uint64_t ctp_ring_fill(const struct ctp_ring_producer *p)
{
	return p->head - p->cached_tail;
}

/* The same, after reading the consumer's tail afresh. */
static inline uint64_t ctp_ring_fill_fresh(struct ctp_ring_producer *p)
{
	p->cached_tail = CTP_LOAD_ACQUIRE(&p->ring->tail);
	return p->head - p->cached_tail;
}

/* ---- consumer ---- */

enum ctp_ring_status {
	CTP_RING_OK = 0,
	CTP_RING_CORRUPT = 1, /* head/tail/record sizes impossible: the ring was skipped to head */
};

/* Called for each complete record; `rec` points into the ring and is valid only during the call.
 * rec->size has been checked: at least 8, a multiple of 8, inside the published bytes. */
typedef void (*ctp_ring_visit_fn)(void *ctx, const struct ctp_rec *rec);

/* Visits the records published since the last call and then frees their room. `data` and
 * `capacity` must already be checked against the mapping (ctp_view_ring). Stops after about
 * max_bytes (0 = no limit) so that one busy ring cannot starve the others. Inline, as the
 * producer's side is, for another reason: the visitor, a constant where it is called, then
 * inlines into the loop, which runs for every record the collector takes. */
static inline enum ctp_ring_status ctp_ring_consume(struct ctp_ring *ring, const uint8_t *data,
						    uint64_t capacity, uint64_t max_bytes,
						    ctp_ring_visit_fn visit, void *ctx,
						    uint64_t *bytes_read)
{
	uint64_t mask = capacity - 1;
	uint64_t tail = CTP_LOAD_RELAXED(&ring->tail);
	/* Acquire pairs with the producer's release of head: every byte before head is written. */
	uint64_t head = CTP_LOAD_ACQUIRE(&ring->head);
	enum ctp_ring_status status = CTP_RING_OK;
	uint64_t start = tail;

	/* tail is in the segment too: one that is not a multiple of 8 cannot come from us. */
	if (head - tail > capacity || tail % 8 != 0) {
		status = CTP_RING_CORRUPT;
		tail = head;
	}
	while (tail != head && (max_bytes == 0 || tail - start < max_bytes)) {
		uint64_t pos = tail & mask;
		uint64_t to_end = capacity - pos;
		uint64_t avail = head - tail;
		const struct ctp_rec *rec = (const struct ctp_rec *)(data + pos);
		if (avail < sizeof(struct ctp_rec) || to_end < sizeof(struct ctp_rec)) {
			status = CTP_RING_CORRUPT;
			tail = head;
			break;
		}
		if (rec->type == CTP_REC_PAD) {
			if (to_end > avail) {
				status = CTP_RING_CORRUPT;
				tail = head;
				break;
			}
			tail += to_end;
			continue;
		}
		uint32_t size = rec->size;
		if (size < sizeof(struct ctp_rec) || size % 8 != 0 || size > avail ||
		    size > to_end) {
			status = CTP_RING_CORRUPT;
			tail = head;
			break;
		}
		visit(ctx, rec);
		tail += size;
	}
	if (bytes_read)
		*bytes_read = tail - start;
	/* Release: we are done reading the bytes before tail; the producer may reuse them. */
	CTP_STORE_RELEASE(&ring->tail, tail);
	return status;
}

#endif

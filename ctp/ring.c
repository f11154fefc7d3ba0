#include "ctp/ring.h"

#include "ctp/atomics.h"

void ctp_ring_producer_init(struct ctp_ring_producer *p, struct ctp_ring *ring, uint8_t *data)
{
	p->ring = ring;
	p->data = data;
	p->mask = ring->capacity - 1;
	p->head = CTP_LOAD_RELAXED(&ring->head);
	p->cached_tail = CTP_LOAD_ACQUIRE(&ring->tail);
	p->pending = 0;
}

enum ctp_ring_status ctp_ring_consume(struct ctp_ring *ring, const uint8_t *data, uint64_t capacity,
				      uint64_t max_bytes, ctp_ring_visit_fn visit, void *ctx,
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

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

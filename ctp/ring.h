/* The per-thread event ring: single producer (the traced thread), single consumer (the
 * collector). The producer never blocks and never overwrites unread bytes: a record that does not
 * fit is dropped and counted in ring->dropped. Protocol and memory orders: ctp/CTP.md "Rings". */
#ifndef CTP_RING_H
#define CTP_RING_H

#include <stdbool.h>
#include <stdint.h>

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

/* Room for a record of `size` bytes (a multiple of 8, at most 65528), contiguous in memory.
 * Returns NULL, and counts one dropped record, when the consumer has not made room. */
void *ctp_ring_reserve(struct ctp_ring_producer *p, uint32_t size);

/* Publishes the record of the last successful reserve. */
void ctp_ring_commit(struct ctp_ring_producer *p);

/* Bytes published and not yet consumed, as the producer last saw the consumer's tail: an
 * overestimate, free of any shared read. */
uint64_t ctp_ring_fill(const struct ctp_ring_producer *p);

/* The same, after reading the consumer's tail afresh. */
uint64_t ctp_ring_fill_fresh(struct ctp_ring_producer *p);

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
 * max_bytes (0 = no limit) so that one busy ring cannot starve the others. */
enum ctp_ring_status ctp_ring_consume(struct ctp_ring *ring, const uint8_t *data, uint64_t capacity,
				      uint64_t max_bytes, ctp_ring_visit_fn visit, void *ctx,
				      uint64_t *bytes_read);

#endif

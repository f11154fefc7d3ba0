/* What the ring tests share: a ring with its data area outside any segment, and self-checking
 * test records. A test record carries a sequence number and enough redundancy that the consumer
 * can tell a record written whole from one overwritten or torn by the producer:
 *   size 8:   the header only; aux = the low 32 bits of seq.
 *   size 16+: aux = checksum of the bytes after the header; seq at +8, then words that are a
 *             function of seq and their index. */
#ifndef CTP_TEST_RING_FIXTURE_H
#define CTP_TEST_RING_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctp/ring.h"

#define TEST_REC_TYPE CTP_REC_SWITCH /* any type but PAD: the ring does not look at it */

struct test_ring {
	struct ctp_ring *ring;
	uint8_t *data;
	uint64_t capacity;
	struct ctp_ring_producer prod;
};

/* An empty ring of `capacity` bytes whose free-running counters start at `start`. */
static inline void test_ring_init(struct test_ring *t, uint64_t capacity, uint64_t start)
{
	t->ring = aligned_alloc(CTP_CACHE_LINE, sizeof(struct ctp_ring));
	t->data = aligned_alloc(CTP_CACHE_LINE, capacity);
	memset(t->ring, 0, sizeof(*t->ring));
	memset(t->data, 0xEE, capacity);
	t->ring->block.kind = CTP_BLOCK_RING;
	t->ring->capacity = capacity;
	t->ring->head = start;
	t->ring->tail = start;
	t->capacity = capacity;
	ctp_ring_producer_init(&t->prod, t->ring, t->data);
}

static inline void test_ring_free(struct test_ring *t)
{
	free(t->ring);
	free(t->data);
}

static inline uint64_t test_rec_word(uint64_t seq, uint64_t i)
{
	return seq * 0x9E3779B97F4A7C15ull + i * 0xC2B2AE3D27D4EB4Full + 1;
}

/* FNV-1a over the payload. */
static inline uint32_t test_rec_checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline void test_rec_fill(void *dst, uint32_t size, uint64_t seq)
{
	struct ctp_rec *r = dst;
	r->size = (uint16_t)size;
	r->type = TEST_REC_TYPE;
	r->nframes = 0;
	if (size == sizeof(struct ctp_rec)) {
		r->aux = (uint32_t)seq;
		return;
	}
	uint64_t *w = (uint64_t *)(r + 1);
	uint32_t nwords = (size - sizeof(*r)) / 8;
	w[0] = seq;
	for (uint32_t i = 1; i < nwords; i++)
		w[i] = test_rec_word(seq, i);
	r->aux = test_rec_checksum((const uint8_t *)w, size - sizeof(*r));
}

/* True when `r` is an intact test record; its sequence number (the low 32 bits only, for an
 * 8-byte record) goes to *seq. */
static inline bool test_rec_check(const struct ctp_rec *r, uint64_t *seq)
{
	if (r->type != TEST_REC_TYPE || r->nframes != 0 || r->size < sizeof(*r) || r->size % 8)
		return false;
	if (r->size == sizeof(*r)) {
		*seq = r->aux;
		return true;
	}
	const uint64_t *w = (const uint64_t *)(r + 1);
	uint32_t nwords = (r->size - sizeof(*r)) / 8;
	if (r->aux != test_rec_checksum((const uint8_t *)w, r->size - sizeof(*r)))
		return false;
	for (uint32_t i = 1; i < nwords; i++)
		if (w[i] != test_rec_word(w[0], i))
			return false;
	*seq = w[0];
	return true;
}

/* Reserves, fills and commits one record; false when the ring dropped it. */
static inline bool test_ring_put(struct test_ring *t, uint32_t size, uint64_t seq)
{
	void *dst = ctp_ring_reserve(&t->prod, size);
	if (!dst)
		return false;
	test_rec_fill(dst, size, seq);
	ctp_ring_commit(&t->prod);
	return true;
}

#endif

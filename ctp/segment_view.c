#include "ctp/segment_view.h"

#include <stdio.h>

#include "ctp/atomics.h"

void *ctp_view_at(const struct ctp_segment_view *v, uint64_t off, uint64_t len)
{
	if (off < v->origin)
		return NULL;
	off -= v->origin;
	if (off > v->size || len > v->size - off)
		return NULL;
	return v->base + off;
}

bool ctp_view_frames_as_untraced(const struct ctp_segment_view *v, uint64_t *frames, uint32_t n)
{
	const struct ctp_header *h = ctp_view_at(v, 0, sizeof(*h));
	if (!h)
		return false;
	/* Acquire: written last, with release, after lo and hi. */
	uint64_t untraced = CTP_LOAD_ACQUIRE(&h->entry_tramp_untraced);
	if (!untraced)
		return false;
	uint64_t lo = CTP_LOAD_RELAXED(&h->entry_tramp_lo);
	uint64_t hi = CTP_LOAD_RELAXED(&h->entry_tramp_hi);
	for (uint32_t i = 0; i < n; i++)
		if (frames[i] >= lo && frames[i] < hi)
			frames[i] = untraced;
	return n && frames[n - 1] == untraced;
}

bool ctp_view_check_header(const struct ctp_segment_view *v, char *why, size_t why_len)
{
	const struct ctp_header *h = ctp_view_at(v, 0, sizeof(*h));
	if (!h) {
		snprintf(why, why_len, "segment of %llu bytes is smaller than its header",
			 (unsigned long long)v->size);
		return false;
	}
	if (h->magic != CTP_MAGIC) {
		snprintf(why, why_len, "bad magic 0x%016llx", (unsigned long long)h->magic);
		return false;
	}
	if (h->version != CTP_VERSION) {
		snprintf(why, why_len, "segment version %u, this collector reads %u", h->version,
			 CTP_VERSION);
		return false;
	}
	if (h->header_size != sizeof(struct ctp_header)) {
		snprintf(why, why_len, "header size %u, expected %zu", h->header_size,
			 sizeof(struct ctp_header));
		return false;
	}
	if (h->stack_depth > CTP_MAX_STACK_DEPTH ||
	    h->station_size != ctp_station_size(h->stack_depth)) {
		snprintf(why, why_len, "station size %u does not fit stack depth %u",
			 h->station_size, h->stack_depth);
		return false;
	}
	if (h->clock_kind != CTP_CLOCK_MONOTONIC_NS && h->clock_kind != CTP_CLOCK_TSC) {
		snprintf(why, why_len, "unknown clock kind %u", h->clock_kind);
		return false;
	}
	return true;
}

uint64_t ctp_view_blocks(const struct ctp_segment_view *v, ctp_view_block_fn visit, void *ctx)
{
	const struct ctp_header *h = (const struct ctp_header *)v->base;
	/* Acquire pairs with the release in the producer's push: the block's contents are visible.
	 */
	return ctp_view_blocks_from(v, CTP_LOAD_ACQUIRE(&h->blocks_head), visit, ctx);
}

uint64_t ctp_view_blocks_from(const struct ctp_segment_view *v, uint64_t head,
			      ctp_view_block_fn visit, void *ctx)
{
	uint64_t off = head;
	uint64_t max_steps = v->size / sizeof(struct ctp_block);
	uint64_t n = 0;
	while (off != 0 && n < max_steps) {
		struct ctp_block *b = ctp_view_at(v, off, sizeof(*b));
		if (!b || off % 8 != 0)
			break;
		uint64_t size = CTP_LOAD_RELAXED(&b->size);
		if (!ctp_view_at(v, off, size) || size < sizeof(*b))
			break;
		visit(ctx, b, off);
		n++;
		off = CTP_LOAD_RELAXED(&b->next);
	}
	return n;
}

static bool is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

bool ctp_view_ring(const struct ctp_segment_view *v, struct ctp_block *block, uint64_t off,
		   struct ctp_ring_ref *out)
{
	if (block->kind != CTP_BLOCK_RING || !ctp_view_at(v, off, sizeof(struct ctp_ring)))
		return false;
	struct ctp_ring *r = (struct ctp_ring *)block;
	uint64_t capacity = r->capacity;
	uint64_t data_off = r->data_off;
	if (!is_pow2(capacity) || capacity < 64 || data_off % 8 != 0)
		return false;
	uint8_t *data = ctp_view_at(v, data_off, capacity);
	if (!data)
		return false;
	out->ring = r;
	out->data = data;
	out->capacity = capacity;
	return true;
}

bool ctp_view_station_chunk(const struct ctp_segment_view *v, const struct ctp_header *h,
			    struct ctp_block *block, uint64_t off, struct ctp_chunk_ref *out)
{
	if (block->kind != CTP_BLOCK_STATIONS ||
	    !ctp_view_at(v, off, sizeof(struct ctp_station_chunk)))
		return false;
	struct ctp_station_chunk *c = (struct ctp_station_chunk *)block;
	/* Read once: the process may change its header after ctp_view_check_header passed it, and
	 * the depth must match the station size used for the bounds below. */
	uint32_t station_size = CTP_LOAD_RELAXED(&h->station_size);
	uint32_t depth = CTP_LOAD_RELAXED(&h->stack_depth);
	uint32_t count = c->count;
	uint64_t stations_off = c->stations_off;
	if (depth > CTP_MAX_STACK_DEPTH || station_size != ctp_station_size(depth) ||
	    stations_off % 8 != 0)
		return false;
	uint8_t *stations = ctp_view_at(v, stations_off, (uint64_t)count * station_size);
	if (!stations)
		return false;
	out->stations = stations;
	out->first = c->first;
	out->count = count;
	out->station_size = station_size;
	out->depth = depth;
	return true;
}

bool ctp_view_module_chunk(const struct ctp_segment_view *v, struct ctp_block *block, uint64_t off,
			   struct ctp_module_ref *out)
{
	if (block->kind != CTP_BLOCK_MODULES ||
	    !ctp_view_at(v, off, sizeof(struct ctp_module_chunk)))
		return false;
	struct ctp_module_chunk *c = (struct ctp_module_chunk *)block;
	uint32_t capacity = c->capacity;
	/* Acquire pairs with the release of count: the entries below it are complete. */
	uint32_t count = CTP_LOAD_ACQUIRE(&c->count);
	if (count > capacity)
		count = capacity;
	if (!ctp_view_at(v, off + sizeof(*c), (uint64_t)capacity * sizeof(struct ctp_module)))
		return false;
	out->modules = c->modules;
	out->count = count;
	return true;
}

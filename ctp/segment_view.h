/* A bounds-checked view of a segment mapped from an untrusted process, shared by the collector
 * and ctp-pstack. Nothing here trusts an offset, a length or a count that it read from the
 * segment: every pointer it returns lies inside [base, base + size). */
#ifndef CTP_SEGMENT_VIEW_H
#define CTP_SEGMENT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/segment.h"

struct ctp_segment_view {
	uint8_t *base;
	uint64_t size;	 /* bytes mapped by the reader */
	uint64_t origin; /* the file offset at base: 0 for a mapping of the whole segment, a
			    window's start for one of a single block (collector/block_window.h) */
};

/* Checks magic, version and the header's self-description. On failure returns false and puts a
 * one-line reason in `why`. */
bool ctp_view_check_header(const struct ctp_segment_view *v, char *why, size_t why_len);

/* Frames as the program's own stack holds them: a frame in the preload's makecontext
 * trampoline becomes the return address it replaced (header.entry_tramp_*). The trampoline is
 * how the tracer sees an entry function return; it is not the program's. Returns whether the
 * outermost frame is that address: the stack reaches its makecontext coroutine's start, and no
 * frame was cut off below. */
bool ctp_view_frames_as_untraced(const struct ctp_segment_view *v, uint64_t *frames, uint32_t n);

/* Pointer to [off, off + len) (file offsets) or NULL when that range is not inside the mapping.
 * The functions that read the header (the block walks, ctp_view_check_header,
 * ctp_view_frames_as_untraced) take a view from the segment's start. */
void *ctp_view_at(const struct ctp_segment_view *v, uint64_t off, uint64_t len);

/* Walks the block list from header.blocks_head. Calls `visit` for each block whose header lies
 * inside the mapping; stops at the end, at an out-of-range offset or after as many steps as
 * blocks could fit (so a cycle cannot hang the reader). Returns the number of blocks visited. */
typedef void (*ctp_view_block_fn)(void *ctx, struct ctp_block *block, uint64_t off);
uint64_t ctp_view_blocks(const struct ctp_segment_view *v, ctp_view_block_fn visit, void *ctx);

/* The same walk from a head the caller loaded (with acquire) and made sure the mapping covers:
 * a reader that maps the file only once can then never meet a block pushed after its mapping
 * was made, which would end the walk before the older blocks. */
uint64_t ctp_view_blocks_from(const struct ctp_segment_view *v, uint64_t head,
			      ctp_view_block_fn visit, void *ctx);

/* A ring checked against the mapping: a power-of-two capacity whose data lies inside it. */
struct ctp_ring_ref {
	struct ctp_ring *ring;
	const uint8_t *data;
	uint64_t capacity;
};
bool ctp_view_ring(const struct ctp_segment_view *v, struct ctp_block *block, uint64_t off,
		   struct ctp_ring_ref *out);

/* A station chunk checked against the mapping and the station_size of the header `h` (the
 * segment's, in v or in a mapping of its own). */
struct ctp_chunk_ref {
	uint8_t *stations; /* station `first` */
	uint32_t first;
	uint32_t count;
	uint32_t station_size;
	uint32_t depth;
};
bool ctp_view_station_chunk(const struct ctp_segment_view *v, const struct ctp_header *h,
			    struct ctp_block *block, uint64_t off, struct ctp_chunk_ref *out);

static inline struct ctp_station *ctp_chunk_station(const struct ctp_chunk_ref *c, uint32_t i)
{
	return (struct ctp_station *)(c->stations + (uint64_t)i * c->station_size);
}

/* A module chunk checked against the mapping; `count` is clamped to its capacity. */
struct ctp_module_ref {
	struct ctp_module *modules;
	uint32_t count;
};
bool ctp_view_module_chunk(const struct ctp_segment_view *v, struct ctp_block *block, uint64_t off,
			   struct ctp_module_ref *out);

#endif

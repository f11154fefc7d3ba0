/* The harvester's mappings of a traced process's segment: the page of its header, and each ring
 * in a mapping of its own (a window), found by reading the block list with pread. It never maps
 * the segment whole: the station chunks, module chunks and the unused ends of extents are the
 * converter's to map, and a segment that grows never has to be mapped again, only its new rings.
 * Under an address-space limit (ulimit -v) the harvester then needs room for the rings alone,
 * a few MiB at a time, where it needed room for the whole segment, and twice over while it
 * moved its mapping to follow a growth. */
#ifndef CTP_COLLECTOR_RING_WINDOW_H
#define CTP_COLLECTOR_RING_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/segment_view.h"

/* Maps the page(s) of the segment's header: the block list's head, the clock kind, the sleep
 * flag. Returns NULL, with a reason in `why`, when it cannot. */
struct ctp_header *ctp_header_map(int memfd, char *why, size_t why_len);
void ctp_header_unmap(struct ctp_header *h);

/* Walks the block list from `head` to `stop` (the head a walk before began at; 0: to the end),
 * newest block first, reading each block's header from the file. Blocks are never unlinked,
 * so those from `stop` on were seen by that walk. Calls `visit` for each block with its kind;
 * stops at an offset outside the file, at a short read or after as many steps as blocks could
 * fit (a cycle cannot hang it). Returns the number of blocks visited. */
typedef void (*ctp_file_block_fn)(void *ctx, uint32_t kind, uint64_t off);
uint64_t ctp_file_blocks(int memfd, uint64_t head, uint64_t stop, ctp_file_block_fn visit,
			 void *ctx);

/* One ring's own mapping: the pages from its header through its data. */
struct ctp_ring_window {
	struct ctp_segment_view view; /* base == NULL: not mapped */
};

/* Maps the ring block at file offset `off` and checks it (ctp_view_ring) in that mapping.
 * False when the block is not a sound ring inside the file (*retry false: it never will be)
 * or when the mapping failed (*retry true, the reason in `why`: out of address space, say). */
bool ctp_ring_window_map(int memfd, uint64_t off, struct ctp_ring_window *w,
			 struct ctp_ring_ref *ref, bool *retry, char *why, size_t why_len);
void ctp_ring_window_unmap(struct ctp_ring_window *w);

#endif

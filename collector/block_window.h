/* The collector's mappings of a traced process's segment: the page of its header, and each
 * block it reads in a mapping of its own (a window), found by reading the block list with
 * pread. Neither of its threads maps the segment whole: the harvester maps the rings, the
 * converter the station and module chunks, and neither maps the other's blocks or the unused
 * ends of extents. A segment that grows is never mapped again, only its new blocks. Under an
 * address-space limit (ulimit -v) the collector then needs room for each block once, a few MiB
 * at a time, where it needed room for the whole segment twice over, and a third time while a
 * thread moved its mapping to follow a growth. */
#ifndef CTP_COLLECTOR_BLOCK_WINDOW_H
#define CTP_COLLECTOR_BLOCK_WINDOW_H

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

/* Reorders the `n - from` entries (of `size` bytes) that a walk appended to `array` from `from`
 * on, which it found newest first, oldest first: the order blocks were added in. */
void ctp_blocks_oldest_first(void *array, size_t from, size_t n, size_t size);

/* One block's own mapping: the pages from its header through its end. */
struct ctp_block_window {
	struct ctp_segment_view view; /* base == NULL: not mapped */
};

void ctp_block_window_unmap(struct ctp_block_window *w);

/* Checks a block in its window and keeps what its reader needs of it in `arg` (a ring's or a
 * chunk's ref, say); false when it is no sound block of the reader's kind. */
typedef bool (*ctp_block_check_fn)(const struct ctp_segment_view *v, struct ctp_block *b,
				   uint64_t off, void *arg);

/* Maps the block at file offset `off` into w, as long as its header says it is (it must lie
 * inside the file), and checks it with `check` (NULL: any block). The view's offsets are the
 * file's. For a reader that tries again later what it could not map: WINDOW_LATER when the
 * mapping failed (out of address space, say: said once on stderr for process `pid`, through
 * *said, naming the block as `what`), WINDOW_NEVER when it is no block inside the file or
 * fails the check (w is then left unmapped). */
enum ctp_window_outcome { CTP_WINDOW_MAPPED, CTP_WINDOW_LATER, CTP_WINDOW_NEVER };
enum ctp_window_outcome ctp_block_window_open(int memfd, uint64_t off, struct ctp_block_window *w,
					      ctp_block_check_fn check, void *arg, uint32_t pid,
					      const char *what, bool *said);

/* Maps the first `bytes` of the block at `off` alone (at most the block) into w, which must be
 * unmapped: for a reader that watches a block's header and has no need of the rest now. False
 * when it is no block inside the file or the mapping failed; w is then left unmapped. */
bool ctp_block_window_open_head(int memfd, uint64_t off, uint64_t bytes,
				struct ctp_block_window *w);

/* The block's header in its window. */
static inline struct ctp_block *ctp_block_window_block(const struct ctp_block_window *w,
						       uint64_t off)
{
	return ctp_view_at(&w->view, off, sizeof(struct ctp_block));
}

#endif

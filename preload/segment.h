/* The process's own segment (segment.c): the memfd the collector maps, grown in extents, and
 * the blocks allocated in it. */
#ifndef CTP_PRELOAD_SEGMENT_H
#define CTP_PRELOAD_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"

/* One piece of the segment file mapped into the process (see segment.c). */
struct ctp_extent {
	uint64_t off, size; /* file range */
	uint8_t *base;	    /* where it is mapped */
};
enum { CTP_MAX_EXTENTS = 64 };

struct ctp_segment {
	struct ctp_header *hdr;
	int memfd;
	uint64_t used;	 /* bytes handed out, under the growth lock */
	uint64_t mapped; /* bytes of all extents, under the growth lock */
	int lock;	 /* growth lock: allocation only, never a switch */
	uint32_t extent_count;
	struct ctp_extent extents[CTP_MAX_EXTENTS];
	/* The block list's head when a fork was about to happen (ctp_segment_fork_prepare). */
	uint64_t fork_head;
};

extern struct ctp_segment ctp_seg CTP_HIDDEN;

/* Makes the segment; on failure leaves nothing behind (ctp_segment_release). */
CTP_HIDDEN bool ctp_segment_create(void);
/* Unmaps the segment and closes its memfd: a process that will not trace keeps no fd and no
 * mapping of the tracer's. Only before tracing began, or where it stopped for good. */
CTP_HIDDEN void ctp_segment_release(void);
/* Allocates `size` bytes (cache-line aligned, zeroed) for a block of `kind` and pushes it on the
 * block list after `fill` has initialised its body. Returns its offset, 0 on failure. */
CTP_HIDDEN uint64_t ctp_segment_alloc_block(uint32_t kind, uint64_t size,
					    void (*fill)(void *block, uint64_t off, void *arg),
					    void *arg);
/* Before fork, in the forking thread: notes the block list as it is, for the child. */
CTP_HIDDEN void ctp_segment_fork_prepare(void);
/* After fork, in the child: a private copy of the segment mapped over the same ranges. */
CTP_HIDDEN bool ctp_segment_fork_child(void);
/* Where the byte at offset off is mapped (slow: allocation and block walks only). */
CTP_HIDDEN void *ctp_segment_ptr(uint64_t off);

#endif

/* Mapping a traced process's segment (a memfd sealed against shrinking) whole into the
 * collector's converting thread, for its station and module chunks, and mapping it again when
 * it has grown. The harvester maps only the header and the rings (collector/ring_window.h), in
 * mappings of its own, so that neither thread ever unmaps memory the other is reading. */
#ifndef CTP_COLLECTOR_SEGMAP_H
#define CTP_COLLECTOR_SEGMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/segment_view.h"

/* Maps the whole file as it is now into `v`: a smaller mapping grows in place where the
 * address space after it is free, else is replaced. Sets *changed when the mapping moved or
 * grew. On failure leaves `v` as it was and puts a reason in `why`. */
bool ctp_segmap_map(int memfd, struct ctp_segment_view *v, bool *changed, char *why,
		    size_t why_len);

void ctp_segmap_unmap(struct ctp_segment_view *v);

/* What a thread last saw of the segment's growth in its own mapping: the process adds blocks
 * (rings, station chunks) and grows the file while it runs, and each thread walks the block
 * list again only when that may have changed. */
struct ctp_segmap_growth {
	uint64_t seen_segment_size; /* header.segment_size at the last remap check */
	uint64_t walked_head;	    /* header.blocks_head at the last block walk */
	bool need_walk;		    /* the mapping moved, or was just made */
	bool behind;		    /* the mapping could not follow the last growth */
};

/* Starts following a mapping just made: its first look walks the blocks. */
void ctp_segmap_growth_init(struct ctp_segmap_growth *g, const struct ctp_segment_view *v);

/* Follows the segment's growth: a bigger committed size means new blocks may lie beyond the
 * mapping, which is then made again (a failure is reported on stderr for process `pid`, the
 * old mapping kept, and the mapping tried again at each later call). Returns true when the
 * block list must be walked again, because the mapping moved or a block was added; the caller
 * then walks it at once. While the mapping is behind, false: a walk would stop at the first
 * block, the newest, and the blocks found before stay the ones to use. */
bool ctp_segmap_follow(struct ctp_segmap_growth *g, int memfd, uint32_t pid,
		       struct ctp_segment_view *v);

#endif

/* Mapping a traced process's segment (a memfd sealed against shrinking) into the collector, and
 * mapping it again when it has grown. Each of the collector's two threads keeps a mapping of
 * its own, so that neither ever unmaps memory the other is reading. */
#ifndef CTP_COLLECTOR_SEGMAP_H
#define CTP_COLLECTOR_SEGMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "collector/segment_view.h"

/* Maps the whole file as it is now into `v` (replacing a smaller mapping). Sets *changed when
 * the mapping moved. On failure leaves `v` as it was and puts a reason in `why`. */
bool ctp_segmap_map(int memfd, struct ctp_segment_view *v, bool *changed, char *why,
		    size_t why_len);

void ctp_segmap_unmap(struct ctp_segment_view *v);

#endif

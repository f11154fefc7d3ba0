/* Where a suspended coroutine's stack comes from: the one seam between ctp-pstack and the way
 * stacks are recorded. A station holds either a whole stack (unwound by the preload at that
 * suspend, or later by the collector) or only the switch's call site and where the suspended
 * coroutine's registers are saved (ctp/CTP.md, "Saved contexts"). For the latter, the stack is
 * unwound here from the saved context, by the unwinder the collector uses (ctp/stackwalk.h),
 * reading the process's memory through the snapshot's source (process_vm_readv, or the core's);
 * the station is read again afterwards, and a walk that raced with a resume is dropped. In a
 * core, a running coroutine's stack is its thread's, unwound from the registers the core keeps
 * for that thread. */
#ifndef CTP_PSTACK_SUSPEND_STACK_H
#define CTP_PSTACK_SUSPEND_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "ctp/station.h"
#include "pstack/source.h"

/* The unwinder of one snapshot, opened at its first use. */
struct pstack_unwinder {
	struct pstack_source *src;
	struct ctp_stackwalk *walk;
	bool tried, refused;
};

void pstack_unwinder_close(struct pstack_unwinder *u);

/* Writes the program counters of coroutine `s`'s suspend stack, innermost first, into
 * pcs[0..max) and returns how many: 0 when none is known (it runs in a live process, never ran,
 * or the process records no stacks). Every pc is a return address (the caller symbolizes it so).
 * `s` is a consistent copy of `live`, a station of `depth` frames in the process's segment. */
uint32_t pstack_suspend_stack(struct pstack_unwinder *u, const struct ctp_station *live,
			      uint32_t depth, const struct ctp_station_snapshot *s, uint64_t *pcs,
			      uint32_t max);

#endif

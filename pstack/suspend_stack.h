/* Where a suspended coroutine's stack comes from: the one seam between ctp-pstack and the way
 * stacks are recorded. Today the preload unwinds at every suspend and leaves the frames in the
 * coroutine's station. When stacks move off the hot path (the station keeps the call site and
 * the saved context; one unwinder in ctp/ walks the full stack later, for the collector and for
 * ctp-pstack alike), that unwinder plugs in here and nothing else in ctp-pstack changes. */
#ifndef CTP_PSTACK_SUSPEND_STACK_H
#define CTP_PSTACK_SUSPEND_STACK_H

#include <stdint.h>

#include "ctp/station.h"
#include "pstack/locate.h"

/* Writes the program counters of coroutine `s`'s suspend stack, innermost first, into
 * pcs[0..max) and returns how many: 0 when none is known (it runs, never ran, or the process
 * records no stacks). Every pc is a return address (the caller symbolizes it so). `s` is a
 * consistent copy of the station read from `seg`. */
uint32_t pstack_suspend_stack(const struct pstack_segment *seg,
			      const struct ctp_station_snapshot *s, uint64_t *pcs, uint32_t max);

#endif

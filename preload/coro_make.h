/* What every make hook (makecontext, make_fcontext, raw_makecontext) does once the real function
 * has built the context. */
#ifndef CTP_PRELOAD_CORO_MAKE_H
#define CTP_PRELOAD_CORO_MAKE_H

#include <stdint.h>

#include "preload/compiler.h"
#include "preload/events.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"

/* Coroutine `coro` made on the stack [lo, hi): the coroutines whose stacks it overlaps have
 * ended, it gets a station and begins CREATED, the stack map knows its stack (and the thread
 * that its first resume goes to first_sp), and the free hook its base. Its station, or
 * CTP_NO_STATION when none is left.
 *
 * Inline: a hook runs on the stack of the coroutine that makes one (a fiber that makes fibers),
 * and a frame more there reached a page more of some of them (skynet 10^5: 25 bytes more of
 * peak RSS a fiber). Retired first, so that a station they free is the one this coroutine
 * takes. */
CTP_ALWAYS_INLINE uint32_t ctp_coro_make(struct ctp_thread *t, uint64_t coro, uint32_t kind,
					 uint64_t entry, uint64_t lo, uint64_t hi,
					 uint64_t first_sp, uint64_t call_site, uint64_t slot)
{
	ctp_stackmap_retire_overlapping(t, lo, hi);
	uint32_t idx = ctp_station_alloc();
	if (idx == CTP_NO_STATION)
		return idx;
	ctp_coro_begin(t, idx, coro, kind, entry, lo, hi, CTP_STATE_CREATED, call_site, slot);
	ctp_stackmap_add(idx, lo, hi);
	ctp_stackmap_hint(t, first_sp, idx);
	ctp_stack_base_note(lo);
	return idx;
}

#endif

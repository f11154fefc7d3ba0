/* What every make hook (makecontext, make_fcontext, raw_makecontext) does once the real function
 * has built the context (coro_make.c). */
#ifndef CTP_PRELOAD_CORO_MAKE_H
#define CTP_PRELOAD_CORO_MAKE_H

#include <stdint.h>

#include "preload/compiler.h"
#include "preload/threads.h"
#include "preload/walk_stack.h"

/* A coroutine to make, and then its station. */
struct ctp_coro_make_job {
	struct ctp_thread *t; /* the thread making it */
	uint64_t coro, entry;
	uint64_t lo, hi;	  /* its stack */
	uint64_t first_sp;	  /* where its first resume goes */
	uint64_t call_site, slot; /* of the hook (CTP_CREATED_HERE) */
	uint32_t kind;
	uint32_t idx; /* out: its station, or CTP_NO_STATION when none is left */
};

/* Runs the job on the stack it is called on: the coroutines whose stacks the new one overlaps
 * have ended, it gets a station and begins CREATED, the stack map knows its stack (and the
 * thread that its first resume goes to first_sp), and the free hook its base. The station is
 * taken first and the overlapped coroutines end before it begins (ctp_stackmap_claim), so their
 * ends come before its creation in the trace. */
CTP_HIDDEN void ctp_coro_make_run(void *job);

/* Coroutine `coro` made on the stack [lo, hi); its station, or CTP_NO_STATION.
 *
 * A hook runs on the stack of the coroutine that makes one (a fiber that makes fibers), and with
 * thousands of small stacks every byte it writes there is resident memory (skynet 10^5: a frame
 * more reached a page more of some fibers, 25 bytes of peak RSS a fiber), or a stack overflow a
 * program near its stack's end would not have had untraced. So the work, its calls and the
 * creation stack's walk run on the thread's walk stack, as a switch's walks do; the maker's
 * stack holds the hook's frame and the job. On the maker's stack only when the walk stack
 * cannot be had (not mapped, or in use by code a signal handler interrupted). */
CTP_ALWAYS_INLINE uint32_t ctp_coro_make(struct ctp_thread *t, uint64_t coro, uint32_t kind,
					 uint64_t entry, uint64_t lo, uint64_t hi,
					 uint64_t first_sp, uint64_t call_site, uint64_t slot)
{
	struct ctp_coro_make_job job = {.t = t,
					.coro = coro,
					.entry = entry,
					.lo = lo,
					.hi = hi,
					.first_sp = first_sp,
					.call_site = call_site,
					.slot = slot,
					.kind = kind};
	struct ctp_walk_area *area = ctp_walk_area_get(t);
	if (!area || !ctp_walk_stack_run(t, area, ctp_coro_make_run, &job))
		ctp_coro_make_run(&job);
	return job.idx;
}

#endif

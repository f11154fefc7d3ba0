/* Where a stack pointer belongs (stackmap.c): coroutine stacks and threads' own stacks, and
 * the inline lookup every switch makes. */
#ifndef CTP_PRELOAD_STACKMAP_H
#define CTP_PRELOAD_STACKMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/stations.h"
#include "preload/threads.h"

/* Notes that a coroutine's stack starts at lo, so that freeing that block ends the coroutine
 * (stack_release.c). */
CTP_HIDDEN void ctp_stack_base_note(uint64_t lo);
/* The coroutine whose stack starts at lo has ended: freeing that block ends nothing now. */
CTP_HIDDEN void ctp_stack_base_forget(uint64_t lo);
CTP_HIDDEN void ctp_stackmap_remove(uint32_t idx, uint64_t lo, uint64_t hi);
/* A stack is made anew over [lo, hi): every coroutine whose stack overlaps it is gone for good
 * (programs reuse stacks, and allocators hand out ranges that overlap old ones partly). */
CTP_HIDDEN void ctp_stackmap_retire_overlapping(struct ctp_thread *t, uint64_t lo, uint64_t hi);
/* Coroutine idx is made on [lo, hi): registers its stack, and retires as above every other
 * coroutine whose stack overlaps it, in one pass over the stack's units (a program that makes a
 * coroutine per request pays this at every request). The running coroutine is never retired. */
CTP_HIDDEN void ctp_stackmap_claim(struct ctp_thread *t, uint32_t idx, uint64_t lo, uint64_t hi);
/* The coroutine station whose stack holds `sp`, or CTP_NO_STATION. */
CTP_HIDDEN uint32_t ctp_stackmap_find(uint64_t sp);
CTP_HIDDEN uint32_t ctp_station_for_sp_slow(struct ctp_thread *t, uint64_t sp);
/* Station idx, just made with its first context at sp, is what a switch to sp resumes: most
 * coroutines are first resumed right after they are made, on the thread that made them, and a
 * runtime that makes one per request (Boost.Fiber, pdns-recursor) would otherwise send each of
 * those switches to the stack map. */
CTP_HIDDEN void ctp_stackmap_hint(struct ctp_thread *t, uint64_t sp, uint32_t idx);
/* Threads' own stacks, found by the slow path of a lookup (stackmap.c). */
/* Registers the thread whose own station is idx; returns its slot (< CTP_MAX_THREAD_SLOTS, the
 * thread's for as long as it lives: unwind.c keys per-thread flags by it), or
 * CTP_MAX_THREAD_SLOTS when every slot is taken. */
enum { CTP_MAX_THREAD_SLOTS = 4096 };
CTP_HIDDEN uint32_t ctp_thread_stacks_add(uint32_t idx);
CTP_HIDDEN void ctp_thread_stacks_remove(uint32_t idx);
/* A coroutine's stack [lo, hi), not on its maker's own stack, may be a buffer on another
 * thread's stack (one lent to it): then every thread's exit looks for coroutines on its stack
 * (threads.c), as a thread cannot tell that another made one there. Set for good, and set
 * without looking where there are more threads than it is worth searching through. */
CTP_HIDDEN void ctp_note_stack_on_other_thread(uint64_t lo, uint64_t hi);
extern uint8_t ctp_coros_on_other_threads_stacks CTP_HIDDEN;

/* Whether a coroutine's stack may lie on thread t's own stack: set for good once one was made
 * there, by t or by another thread. Until then an address on t's stack is t's, without the map. */
static inline bool ctp_thread_stack_may_hold_coroutines(const struct ctp_thread *t)
{
	return t->coro_on_own_stack ||
	       __atomic_load_n(&ctp_coros_on_other_threads_stacks, __ATOMIC_RELAXED);
}

extern uint64_t ctp_stackmap_generation CTP_HIDDEN;

/* Whether station s is a live coroutine whose stack overlaps [lo, hi). */
CTP_ALWAYS_INLINE bool ctp_station_live_over_at(const struct ctp_station *s, uint64_t lo,
						uint64_t hi)
{
	uint32_t state = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
	return state != CTP_STATE_FREE && state != CTP_STATE_EXITED &&
	       __atomic_load_n(&s->stack_lo, __ATOMIC_RELAXED) < hi &&
	       lo < __atomic_load_n(&s->stack_hi, __ATOMIC_RELAXED);
}

/* Whether station idx is a live coroutine whose stack overlaps [lo, hi). */
static inline bool ctp_station_live_over(uint32_t idx, uint64_t lo, uint64_t hi)
{
	return ctp_station_live_over_at(ctp_station_at(idx), lo, hi);
}

/* A station found for a stack pointer: its index and its address. */
struct ctp_stack_owner {
	uint32_t idx;
	struct ctp_station *station;
};

/* Whether hint h answers for sp: same page, and the station still holds sp. */
CTP_ALWAYS_INLINE bool ctp_lookup_hint_holds(const struct ctp_lookup_hint *h, uint64_t page,
					     uint64_t sp)
{
	return h->page == page && ctp_station_live_over_at(h->station, sp, sp + 1);
}

/* The set of the thread's lookup hints that may answer for a page (threads.h): a multiplicative
 * hash, as the pages of one runtime's suspend points differ by multiples of its stack size. */
CTP_ALWAYS_INLINE struct ctp_lookup_hint *ctp_lookup_set(struct ctp_thread *t, uint64_t page)
{
	return t->lookup[(page * 0x9e3779b97f4a7c15ull) >> (64 - CTP_LOOKUP_SET_BITS)];
}

/* The station a switch to a context whose stack pointer is `sp` resumes: a coroutine's, else
 * the thread whose own stack holds it (this thread's when none is known). The thread's answers
 * for the page are checked inline, on every switch; the stack map only when they do not hold.
 * The hints keep the station's address, so that a hit reads the station without computing where
 * it is, and the switch that follows has it too. The thread's own page first: a switch back to
 * the scheduler on the thread's stack is half of all switches in most programs, and a miss there
 * costs one comparison. (The answers cannot disagree: a page is resolved to the thread only
 * when no coroutine's stack lies on it, and stays so only while no stack was registered; a
 * coroutine's station holds only what was.) */
CTP_ALWAYS_INLINE struct ctp_stack_owner ctp_stack_owner(struct ctp_thread *t, uint64_t sp)
{
	uint64_t page = sp >> 12;
	if (t->own_page == page &&
	    t->own_gen == __atomic_load_n(&ctp_stackmap_generation, __ATOMIC_ACQUIRE))
		return (struct ctp_stack_owner){t->self, t->self_station};
	struct ctp_lookup_hint *set = ctp_lookup_set(t, page);
	if (ctp_lookup_hint_holds(&set[0], page, sp))
		return (struct ctp_stack_owner){set[0].idx, set[0].station};
	if (ctp_lookup_hint_holds(&set[1], page, sp))
		return (struct ctp_stack_owner){set[1].idx, set[1].station};
	uint32_t idx = ctp_station_for_sp_slow(t, sp);
	return (struct ctp_stack_owner){idx,
					idx == t->self ? t->self_station : ctp_station_at(idx)};
}

static inline uint32_t ctp_station_for_sp(struct ctp_thread *t, uint64_t sp)
{
	return ctp_stack_owner(t, sp).idx;
}

#endif

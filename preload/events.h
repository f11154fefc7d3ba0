/* Coroutine events (events.c): a ring record and the station update that go together. */
#ifndef CTP_PRELOAD_EVENTS_H
#define CTP_PRELOAD_EVENTS_H

#include <stdint.h>

#include "ctp/segment.h"
#include "ctp/station.h"
#include "preload/compiler.h"
#include "preload/segment.h"
#include "preload/threads.h"

static inline uint64_t ctp_coro_new_id(void)
{
	return __atomic_fetch_add(&ctp_seg.hdr->next_coro_id, 1, __ATOMIC_RELAXED);
}
/* New coroutine `coro` in station `idx` (already allocated): fills the station and emits CREATE
 * with the creation stack, from `call_site` (the return address of the hook that creates it,
 * stored at `slot`: the hook's frame address + 8) on; 0, 0 for no stack (a thread's). */
CTP_HIDDEN void ctp_coro_begin(struct ctp_thread *t, uint32_t idx, uint64_t coro, uint32_t kind,
			       uint64_t entry, uint64_t stack_lo, uint64_t stack_hi, uint32_t state,
			       uint64_t call_site, uint64_t slot);
/* The call_site and slot of ctp_coro_begin, in the hook that creates the coroutine. */
#define CTP_CREATED_HERE()                                                                         \
	(uint64_t) __builtin_return_address(0), (uint64_t)__builtin_frame_address(0) + 8
/* Where the current coroutine suspends, as a hook knows it for free: the return address into
 * the code that called the switch, and where the switch saves the coroutine's registers
 * (station.saved_ctx, enum ctp_ctx_kind), from which its whole stack is unwound later, off the
 * switch path, if it stays suspended (see unwind_saved.c and the collector). */
struct ctp_suspend_point {
	uint64_t call_site;
	uint64_t ret_slot; /* where call_site is stored: the stack's depth at the call */
	uint64_t ctx;
	uint32_t ctx_kind;
};
/* Whether to unwind the whole stack here, by default (stacks=lasting): only the first time the
 * coroutine of station s suspends or waits at this place (call site, and the stack's depth
 * there, which tells apart most paths that lead to one call site), so that the history shows
 * every coroutine's functions at least once at each place it waits, while a coroutine that
 * waits again and again at the same places (a loop) costs only its call site. What is not
 * unwound here is unwound later from the saved context if the coroutine stays suspended (and
 * checked there against memory: two callers can reach a call site at the same depth). Only
 * the thread running the coroutine touches unwound_at.
 *
 * The last four places are kept, as 32-bit hashes in the bytes two whole keys took: a SimGrid
 * actor that sends and receives waits at four places in turn, and with two kept every one of
 * its suspends was a first time and walked (a fifth of its run in libunwind). A hash that
 * meets another place's skips one first walk; the place's stack is still unwound later if the
 * coroutine stays there. */
static inline __attribute__((always_inline)) bool
ctp_first_time_here(struct ctp_station *s, uint64_t call_site, uint64_t depth)
{
	/* Never 0, which is an empty slot. */
	uint32_t key = (uint32_t)(((call_site ^ (depth << 16)) * 0x9e3779b97f4a7c15ull) >> 32) | 1;
	uint32_t *seen = s->unwound_at;
	if (__builtin_expect(key == seen[0] || key == seen[1] || key == seen[2] || key == seen[3],
			     1))
		return false;
	seen[3] = seen[2];
	seen[2] = seen[1];
	seen[1] = seen[0];
	seen[0] = key;
	return true;
}

/* A switch at `now` on thread t from t->current to `to`: the current coroutine's suspend point
 * (and, with stacks=every-switch, its whole stack, unwound here), both stations, the SWITCH
 * record; t->current becomes `to`. Hooks read the clock before they look the target up, so
 * that the clock's latency (the largest single cost of a switch) overlaps the lookup. */
CTP_HIDDEN void ctp_coro_switch(struct ctp_thread *t, uint32_t to, uint32_t how,
				const struct ctp_suspend_point *at, uint64_t now);
/* The same switch, the current coroutine leaving without having saved itself (a setcontext with
 * no getcontext since it was resumed): its station stays, in state LEFT. */
CTP_HIDDEN void ctp_coro_leave(struct ctp_thread *t, uint32_t to, uint32_t how,
			       const struct ctp_suspend_point *at, uint64_t now);
/* Set by the getcontext hook, cleared when a coroutine is resumed (ucontext_hooks.c). */
extern __thread uint8_t ctp_context_saved CTP_HIDDEN __attribute__((tls_model("initial-exec")));
/* The same switch without a suspend stack: the hook runs on the target side already. */
CTP_HIDDEN void ctp_coro_switch_nostack(struct ctp_thread *t, uint32_t to, uint32_t how);
/* The current coroutine of t ends (how = the switch that ends it): EXIT record, station exited;
 * then the switch to `to`, without a suspend stack. The station is recycled. */
CTP_HIDDEN void ctp_coro_end_and_switch(struct ctp_thread *t, uint32_t to, uint32_t how);
/* Ends the coroutine in station idx that is not running (its stack was reused). */
CTP_HIDDEN void ctp_coro_abandon(struct ctp_thread *t, uint32_t idx);
/* The thread t ends: EXIT record for its own coroutine, whose station goes back to the pool,
 * and for the coroutine running on it if another (it called pthread_exit, or was cancelled),
 * which is recycled. */
CTP_HIDDEN void ctp_thread_end(struct ctp_thread *t);
/* In a fork child, where only t's thread goes on: the coroutine in station idx, another thread's
 * own or the one running on another thread, ends as at that thread's exit. */
CTP_HIDDEN void ctp_coro_end_in_fork_child(struct ctp_thread *t, uint32_t idx);

#endif

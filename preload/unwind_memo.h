/* Stacks unwound at a switch, remembered with where their return addresses lay, so that the next
 * coroutine to suspend at the same place is checked against memory instead of walked again.
 *
 * By default a coroutine's stack is unwound on the switch path the first time it suspends at a
 * place. A program that makes a coroutine per request (pdns-recursor, a Boost.Fiber tree) has
 * every one of them suspend at the same few places, each for the first time: libunwind walked
 * each of those stacks, ~1,000 instructions a walk, nearly half of what tracing added to such a
 * program. Coroutines made alike and suspended at one call site at one depth below their stack's
 * top mostly have the same stack there, but not always: two callers whose frames are equal in
 * size reach a call site at the same depth. So a remembered stack is used only when each of its
 * return addresses is still in memory where the walk's lay, as the collector does for a
 * coroutine back at a place it unwound before (collector/deferred_stacks.c): the words are the
 * stack itself, so a match is the walk's own answer. Where they lay is found by looking for
 * each address above the previous one, from the call site up; a place is remembered at its
 * second walk, so that places seen once cost no search.
 *
 * Per thread, in the walk area (walk_stack.h), used only on the walk stack: no lock. */
#ifndef CTP_PRELOAD_UNWIND_MEMO_H
#define CTP_PRELOAD_UNWIND_MEMO_H

#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"

/* Sets of four places, chosen by a hash of the call site and depth. With one place a set (32
 * sets), two places that a program suspends at over and over and whose hashes met pushed each
 * other out at every walk, and were walked each time: where they meet moves with the addresses
 * the libraries load at, so one run in three or so of a program that makes a coroutine per
 * request walked thousands of stacks instead of dozens (skynet 10^4: 3,357 walks against 31,
 * from a build whose only change was the preload's size). A place may hold more than one stack:
 * requests that reach one call site at one depth through other callers (two handlers whose
 * frames are alike) each have theirs, where one stack a place had every such request walked
 * (libunwind, ~1,000 instructions) when the one before it had come the other way. */
enum { CTP_UNWIND_MEMO_SETS = 32, CTP_UNWIND_MEMO_WAYS = 4 };

/* A place: a call site at a depth (bytes from the call site's slot to the stack's top). A set's
 * four places fill one cache line, so that a look for a place reads one line, not one per way. */
struct ctp_unwind_memo_place {
	uint64_t call_site;
	uint32_t depth;
	uint32_t n; /* frames remembered, call site first; 0: the place was walked once */
};

/* The stack remembered at a place. */
struct ctp_unwind_memo_stack {
	uint64_t frames[CTP_MAX_STACK_DEPTH];
	uint32_t
		offset[CTP_MAX_STACK_DEPTH]; /* frames[k] lay at the call site's slot + offset[k] */
};

struct ctp_unwind_memo {
	struct ctp_unwind_memo_place place[CTP_UNWIND_MEMO_SETS][CTP_UNWIND_MEMO_WAYS]
		__attribute__((aligned(64)));
	struct ctp_unwind_memo_stack stack[CTP_UNWIND_MEMO_SETS][CTP_UNWIND_MEMO_WAYS];
	uint8_t next_taken[CTP_UNWIND_MEMO_SETS]; /* the way a full set gives up next, in turn */
};
_Static_assert(sizeof(struct ctp_unwind_memo_place) * CTP_UNWIND_MEMO_WAYS == 64,
	       "a set's places are one cache line");

/* The stack remembered for a suspend whose call site lies at `slot` in a stack whose top is
 * `top`, if memory still holds it; *frames points into the memo, valid until the next note.
 * Returns how many frames (at most max), 0 when there is none to use. */
CTP_HIDDEN uint32_t ctp_unwind_memo_find(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top,
					 uint32_t max, const uint64_t **frames);
/* After a walk of such a suspend (frames[0] is the call site, read from `slot`): notes the place,
 * and at its second walk remembers the stack where its return addresses are found; a place that
 * has stacks remembered already, none of them the one in memory now, remembers this one too. */
CTP_HIDDEN void ctp_unwind_memo_note(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top,
				     const uint64_t *frames, uint32_t n);

#endif

/* Where stack walks run (walk_stack.c): on a stack of the thread's own, not on the coroutine's
 * stack they walk. */
#ifndef CTP_PRELOAD_WALK_STACK_H
#define CTP_PRELOAD_WALK_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/threads.h"
#include "preload/unwind_memo.h"

/* Frames of the preload's own a walk may find above the code it is asked about (hook, assembly
 * stub, helpers that did not inline, the walk stack's own two: the function run there and
 * ctp_on_walk_stack). */
enum { CTP_WALK_OWN_FRAMES_MAX = 10 };

/* A thread's walk area: on top of the stack walks run on, what a function run there is handed
 * (`job`, so that the caller needs no frame of its own: see events.c), the walker's result, the
 * thread's lookup hints and the stacks it remembers (unwind_memo.h; its pages are touched only
 * as places are noted). */
struct ctp_walk_area {
	uint64_t job[8];
	void *frames[CTP_MAX_STACK_DEPTH + CTP_WALK_OWN_FRAMES_MAX];
	struct ctp_lookup_hint lookup[CTP_LOOKUP_SETS][2]; /* the thread's (threads.h) */
	struct ctp_unwind_memo memo;
};

/* The mapping: a guard page, then the stack, the area on its top. 64 KiB is libunwind's slow
 * path and a signal handler that lands during a walk, with room. */
enum {
	CTP_WALK_GUARD_BYTES = 4096,
	CTP_WALK_STACK_BYTES = 64 * 1024,
	CTP_WALK_MAP_BYTES = CTP_WALK_GUARD_BYTES + CTP_WALK_STACK_BYTES +
			     (sizeof(struct ctp_walk_area) + 4095) / 4096 * 4096,
	/* From the mapping's start to the stack's top (the area's start). */
	CTP_WALK_TOP_OFFSET = CTP_WALK_MAP_BYTES - sizeof(struct ctp_walk_area),
};

CTP_HIDDEN struct ctp_walk_area *ctp_walk_area_map(struct ctp_thread *t);

/* This thread's walk area, mapped on first use; NULL when it could not be. The hooks of switches
 * call it too: their next switches run there (switch_stub.h), also when they never walk. */
static inline struct ctp_walk_area *ctp_walk_area_get(struct ctp_thread *t)
{
	if (CTP_UNLIKELY(!t->walk_top))
		return ctp_walk_area_map(t);
	return (struct ctp_walk_area *)t->walk_top;
}

/* At thread exit: the area is given back. */
CTP_HIDDEN void ctp_walk_area_release(struct ctp_thread *t);
/* Calls fn(arg) with the stack pointer just below the area. Its frame links back to the
 * caller's with a frame pointer, so a walk from fn goes on into the caller's stack (libunwind's
 * fast path takes such a frame as a plain one). */
CTP_HIDDEN void ctp_on_walk_stack(void *arg, void (*fn)(void *arg), struct ctp_walk_area *area);

/* Whether this runs on t's walk stack already: the C part of a hook entered through a stub. */
static inline bool ctp_walk_stack_here(const struct ctp_thread *t)
{
	uint8_t *sp = __builtin_frame_address(0);
	return t->walk_top && sp >= t->walk_top - CTP_WALK_TOP_OFFSET && sp < t->walk_top;
}

/* Runs fn(arg) on the thread's walk stack: switched to, or right here when this runs on it
 * already (the C part of a switch hook, whose stub switched: switch_stub.h). Returns false,
 * fn not run, when code this interrupted uses the walk stack: a signal handler that landed
 * between a stub's switch and its return, on another stack, must not start again at the top. */
static inline bool ctp_walk_stack_run(struct ctp_thread *t, struct ctp_walk_area *area,
				      void (*fn)(void *arg), void *arg)
{
	if (ctp_walk_stack_here(t)) {
		fn(arg);
		return true;
	}
	if (t->on_walk_stack)
		return false;
	t->on_walk_stack = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ctp_on_walk_stack(arg, fn, area);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->on_walk_stack = 0;
	return true;
}

#endif

/* The common path of a recorded switch: both stations under their seqlocks and the SWITCH record.
 * Inline here, not in events.c, so that the hooks that switch most (Boost's, fcontext_hooks.c)
 * run it in their own frame: a call into events.c cost a second prologue and epilogue, the
 * suspend point passed through memory, and station lookups the hook had made already (about 40
 * instructions of the ~240 a traced switch adds). Only the rare paths are out of line: the
 * unwound switch (events.c), which needs the walk stack anyway. */
#ifndef CTP_PRELOAD_SWITCH_PATH_H
#define CTP_PRELOAD_SWITCH_PATH_H

#include <stdint.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "ctp/station.h"
#include "preload/compiler.h"
#include "preload/events.h"
#include "preload/process.h"
#include "preload/rings.h"
#include "preload/stations.h"
#include "preload/threads.h"

CTP_ALWAYS_INLINE struct ctp_rec ctp_rec_header(uint32_t size, uint8_t type, uint32_t nframes,
						uint32_t aux)
{
	return (struct ctp_rec){
		.size = (uint16_t)size, .type = type, .nframes = (uint8_t)nframes, .aux = aux};
}

CTP_ALWAYS_INLINE void ctp_station_suspend(struct ctp_station *s, uint32_t state, uint64_t now,
					   const uint64_t *frames, uint32_t n, uint32_t stack_kind,
					   const struct ctp_suspend_point *at)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->state, state);
	CTP_STORE_RELAXED(&s->last_switch, now);
	CTP_STORE_RELAXED(&s->saved_ctx, at ? at->ctx : 0);
	CTP_STORE_RELAXED(&s->ctx_kind, at ? at->ctx_kind : CTP_CTX_NONE);
	CTP_STORE_RELAXED(&s->stack_kind, stack_kind);
	CTP_STORE_RELAXED(&s->stack_len, n);
	for (uint32_t i = 0; i < n; i++)
		CTP_STORE_RELAXED(&s->frames[i], frames[i]);
	ctp_station_write_end(s, seq);
}

CTP_ALWAYS_INLINE void ctp_station_resume(struct ctp_station *s, uint32_t tid, uint64_t now)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->state, CTP_STATE_RUNNING);
	CTP_STORE_RELAXED(&s->tid, tid);
	CTP_STORE_RELAXED(&s->last_switch, now);
	CTP_STORE_RELAXED(&s->switches, CTP_LOAD_RELAXED(&s->switches) + 1);
	ctp_station_write_end(s, seq);
}

/* from_station/from_switches: `from`'s station and its switch count at this suspend
 * (ctp_rec_switch), UINT32_MAX when `from` does not stay suspended. */
CTP_ALWAYS_INLINE void ctp_emit_switch_record(struct ctp_thread *t, uint64_t now, uint64_t from,
					      uint64_t to, uint32_t how, uint32_t from_station,
					      uint32_t from_switches, const uint64_t *frames,
					      uint32_t n)
{
	uint32_t size = sizeof(struct ctp_rec_switch) + 8 * n;
	struct ctp_rec_switch *rec = ctp_emit_reserve(t, size);
	if (!rec)
		return;
	rec->h = ctp_rec_header(size, CTP_REC_SWITCH, n, how);
	rec->ts = now;
	rec->from = from;
	rec->to = to;
	rec->from_station = from_station;
	rec->from_switches = from_switches;
	for (uint32_t i = 0; i < n; i++)
		rec->frames[i] = frames[i];
	ctp_emit_commit(t);
}

/* The switch from t->current (its station from_s) to station `to` (to_s), recording `n` frames of
 * the coroutine suspended; t->current becomes `to`. */
CTP_ALWAYS_INLINE void ctp_switch_with_stack(struct ctp_thread *t, struct ctp_station *from_s,
					     uint32_t to, struct ctp_station *to_s, uint32_t how,
					     uint32_t from_state, uint64_t now,
					     const uint64_t *frames, uint32_t n,
					     uint32_t stack_kind,
					     const struct ctp_suspend_point *at)
{
	uint32_t from = t->current;
	ctp_station_suspend(from_s, from_state, now, frames, n, stack_kind, at);
	ctp_station_resume(to_s, t->tid, now);
	ctp_context_saved = 0; /* the coroutine resumed has saved nothing yet */
	ctp_emit_switch_record(t, now, CTP_LOAD_RELAXED(&from_s->coro),
			       CTP_LOAD_RELAXED(&to_s->coro), how, from,
			       (uint32_t)CTP_LOAD_RELAXED(&from_s->switches), frames, n);
	t->current = to;
	t->current_station = to_s;
}

/* The switch that unwinds the whole stack of the coroutine it suspends (events.c). */
CTP_HIDDEN void ctp_switch_unwound(struct ctp_thread *t, uint32_t to, uint32_t how,
				   uint32_t from_state, const struct ctp_suspend_point *at,
				   uint64_t now, uint32_t depth);

/* The stack a switch records of the coroutine it suspends: its call site (free: the hook's
 * return address), or the whole stack, unwound here, the first time it suspends at a point, or
 * on every switch with stacks=every-switch. to_s is station `to`, which the caller has looked
 * up already. The suspend point comes by value: only the unwound switch needs it in memory, and
 * a hook that built it there for every switch spent 7 instructions on it. */
CTP_ALWAYS_INLINE void ctp_switch_from(struct ctp_thread *t, uint32_t to, struct ctp_station *to_s,
				       uint32_t how, uint32_t from_state,
				       struct ctp_suspend_point at, uint64_t now)
{
	int state = ctp_thread_enter(t);
	uint32_t depth = ctp_proc.config.stack_depth;
	struct ctp_station *from_s = t->current_station;
	if (depth == 0) {
		ctp_switch_with_stack(t, from_s, to, to_s, how, from_state, now, NULL, 0,
				      CTP_STACK_NONE, NULL);
	} else if (ctp_proc.config.stacks_every_switch ||
		   ctp_first_time_here(from_s, at.call_site, at.ret_slot)) {
		struct ctp_suspend_point copy = at; /* in memory on this path alone */
		ctp_switch_unwound(t, to, how, from_state, &copy, now, depth);
	} else {
		uint64_t site = at.call_site;
		ctp_switch_with_stack(t, from_s, to, to_s, how, from_state, now, &site,
				      site ? 1 : 0, site ? CTP_STACK_CALL_SITE : CTP_STACK_NONE,
				      &at);
	}
	ctp_thread_leave(t, state);
}

#endif

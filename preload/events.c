/* A coroutine's life as the preload records it: each change goes to its station (the current
 * state, exact even when records are dropped) and, as a record, to the thread's ring (the
 * history). Switches are the hot path: no syscall, no lock, no allocation here. */
#include <string.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "ctp/station.h"
#include "preload/events.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/rings.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/switch_path.h"
#include "preload/threads.h"
#include "preload/unwind.h"
#include "preload/walk_stack.h"

void ctp_coro_begin(struct ctp_thread *t, uint32_t idx, uint64_t coro, uint32_t kind,
		    uint64_t entry, uint64_t stack_lo, uint64_t stack_hi, uint32_t state,
		    uint64_t call_site, uint64_t slot)
{
	const uint64_t *frames = NULL;
	uint32_t n = 0;
	int state_before = ctp_thread_enter(t);
	/* Objects loaded since the last look (dlopen is not hooked, see modules.c). */
	if (kind == CTP_KIND_THREAD)
		ctp_modules_scan();
	else
		ctp_modules_note_code(entry);
	if (kind != CTP_KIND_THREAD)
		n = ctp_unwind_from(&frames, ctp_proc.config.stack_depth, call_site, slot);
	uint64_t now = ctp_now();
	struct ctp_station *s = ctp_station_at(idx);
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->coro, coro);
	CTP_STORE_RELAXED(&s->kind, kind);
	CTP_STORE_RELAXED(&s->state, state);
	CTP_STORE_RELAXED(&s->tid, t->tid);
	CTP_STORE_RELAXED(&s->entry, entry);
	CTP_STORE_RELAXED(&s->created, now);
	CTP_STORE_RELAXED(&s->last_switch, now);
	CTP_STORE_RELAXED(&s->switches, state == CTP_STATE_RUNNING ? 1 : 0);
	CTP_STORE_RELAXED(&s->stack_lo, stack_lo);
	CTP_STORE_RELAXED(&s->stack_hi, stack_hi);
	if (kind != CTP_KIND_THREAD && stack_lo < t->stack_hi && t->stack_lo < stack_hi)
		t->coro_on_own_stack = 1;
	else if (kind != CTP_KIND_THREAD)
		ctp_note_stack_on_other_thread(stack_lo, stack_hi);
	CTP_STORE_RELAXED(&s->wait_fd, -1);
	CTP_STORE_RELAXED(&s->wait_op, CTP_OP_NONE);
	CTP_STORE_RELAXED(&s->saved_ctx, 0);
	CTP_STORE_RELAXED(&s->ctx_kind, CTP_CTX_NONE);
	CTP_STORE_RELAXED(&s->stack_kind, CTP_STACK_NONE);
	CTP_STORE_RELAXED(&s->stack_len, 0);
	memset(s->unwound_at, 0, sizeof(s->unwound_at));
	CTP_STORE_RELAXED(&s->ended_to, 0);
	ctp_station_write_end(s, seq);

	uint32_t size = sizeof(struct ctp_rec_create) + 8 * n;
	struct ctp_rec_create *rec = ctp_emit_reserve(t, size);
	if (rec) {
		rec->h = ctp_rec_header(size, CTP_REC_CREATE, n, kind);
		rec->ts = now;
		rec->coro = coro;
		rec->parent = t->current == CTP_NO_STATION || t->current == idx
				      ? 0
				      : CTP_LOAD_RELAXED(&ctp_station_at(t->current)->coro);
		rec->entry = entry;
		rec->stack_lo = stack_lo;
		rec->stack_hi = stack_hi;
		if (n)
			memcpy(rec->frames, frames, 8 * n);
		ctp_emit_commit(t);
	}
	ctp_thread_leave(t, state_before);
}

/* `to`: the station its thread resumes next, CTP_NO_STATION when none. */
static void station_exit(struct ctp_station *s, uint64_t now, uint32_t to)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->state, CTP_STATE_EXITED);
	CTP_STORE_RELAXED(&s->ended_to, to == CTP_NO_STATION ? 0 : to + 1);
	CTP_STORE_RELAXED(&s->last_switch, now);
	CTP_STORE_RELAXED(&s->ctx_kind, CTP_CTX_NONE);
	CTP_STORE_RELAXED(&s->stack_kind, CTP_STACK_NONE);
	CTP_STORE_RELAXED(&s->stack_len, 0);
	ctp_station_write_end(s, seq);
}

static void emit_exit(struct ctp_thread *t, uint64_t now, uint64_t coro, uint32_t how)
{
	struct ctp_rec_exit *rec = ctp_emit_reserve(t, sizeof(*rec));
	if (!rec)
		return;
	rec->h = ctp_rec_header(sizeof(*rec), CTP_REC_EXIT, 0, how);
	rec->ts = now;
	rec->coro = coro;
	ctp_emit_commit(t);
}

/* The switch of the out-of-line paths below, which look both stations up here. */
static inline __attribute__((always_inline)) void
switch_with_stack(struct ctp_thread *t, uint32_t to, uint32_t how, uint32_t from_state,
		  uint64_t now, const uint64_t *frames, uint32_t n, uint32_t stack_kind,
		  const struct ctp_suspend_point *at)
{
	ctp_switch_with_stack(t, t->current_station, to, ctp_station_at(to), how, from_state, now,
			      frames, n, stack_kind, at);
}

/* A switch that unwinds the whole stack of the coroutine it suspends (~90 ns), run on the
 * thread's walk stack (walk_stack.h) from its start: the walk needs kilobytes, and every byte of
 * the coroutine's stack this path uses beyond the common switch's is a byte more of a small
 * fiber stack touched (each coroutine unwinds at least once, at its first suspend). So
 * ctp_switch_unwound hands its arguments over in the walk area and jumps; it keeps no frame. (A
 * switch entered through a stub, switch_stub.h, runs there already and stays.) */
struct unwound_switch {
	struct ctp_thread *t;
	const struct ctp_suspend_point *at;
	uint64_t now;
	uint64_t sp; /* in the stack walked: where the call site is stored */
	uint32_t to, how, from_state, depth;
};

static void switch_unwound_on_walk_stack(void *arg)
{
	struct ctp_walk_area *area = arg;
	const struct unwound_switch *u = (const struct unwound_switch *)area->job;
	const struct ctp_suspend_point *at = u->at;
	const uint64_t *frames;
	uint32_t n = ctp_unwind_from_walk_stack(area, &frames, u->depth, at->call_site, u->sp);
	uint32_t kind = CTP_STACK_AT_SWITCH;
	if (n == 0 && at->call_site) {
		frames = &at->call_site;
		n = 1;
		kind = CTP_STACK_CALL_SITE;
	}
	switch_with_stack(u->t, u->to, u->how, u->from_state, u->now, frames, n, kind, at);
}

/* Without a walk stack (it could not be mapped): the call site alone. */
static __attribute__((noinline)) void switch_call_site(struct ctp_thread *t, uint32_t to,
						       uint32_t how, uint32_t from_state,
						       const struct ctp_suspend_point *at,
						       uint64_t now)
{
	uint32_t n = at->call_site ? 1 : 0;
	switch_with_stack(t, to, how, from_state, now, &at->call_site, n,
			  n ? CTP_STACK_CALL_SITE : CTP_STACK_AT_SWITCH, at);
}

__attribute__((noinline)) void ctp_switch_unwound(struct ctp_thread *t, uint32_t to, uint32_t how,
						  uint32_t from_state,
						  const struct ctp_suspend_point *at, uint64_t now,
						  uint32_t depth)
{
	struct ctp_walk_area *area = ctp_walk_area_get(t);
	if (CTP_UNLIKELY(!area)) {
		switch_call_site(t, to, how, from_state, at, now);
		return;
	}
	/* A hook entered through a stub runs on the walk stack already, where the memo is read:
	 * a stack remembered at this place (the common case in a program that makes a coroutine
	 * per request, each suspending there for the first time) needs neither the walk nor its
	 * set-up. A place not remembered is looked for again below, before its walk: rare. */
	if (ctp_walk_stack_here(t) && at->call_site) {
		const uint64_t *frames;
		uint32_t n = ctp_unwind_remembered(area, &frames, depth, at->ret_slot,
						   t->current_station);
		if (n) {
			switch_with_stack(t, to, how, from_state, now, frames, n,
					  CTP_STACK_AT_SWITCH, at);
			return;
		}
	}
	_Static_assert(sizeof(struct unwound_switch) <= sizeof(area->job), "fits the walk area");
	*(struct unwound_switch *)area->job = (struct unwound_switch){
		.t = t,
		.at = at,
		.now = now,
		.sp = at->ret_slot,
		.to = to,
		.how = how,
		.from_state = from_state,
		.depth = depth,
	};
	if (!ctp_walk_stack_run(t, area, switch_unwound_on_walk_stack, area))
		switch_call_site(t, to, how, from_state, at, now);
}

void ctp_coro_switch(struct ctp_thread *t, uint32_t to, uint32_t how,
		     const struct ctp_suspend_point *at, uint64_t now)
{
	ctp_switch_from(t, to, ctp_station_at(to), how, CTP_STATE_SUSPENDED, *at, now);
}

void ctp_coro_leave(struct ctp_thread *t, uint32_t to, uint32_t how,
		    const struct ctp_suspend_point *at, uint64_t now)
{
	ctp_switch_from(t, to, ctp_station_at(to), how, CTP_STATE_LEFT, *at, now);
}

void ctp_coro_switch_nostack(struct ctp_thread *t, uint32_t to, uint32_t how)
{
	int state = ctp_thread_enter(t);
	switch_with_stack(t, to, how, CTP_STATE_SUSPENDED, ctp_now(), NULL, 0, CTP_STACK_NONE,
			  NULL);
	ctp_thread_leave(t, state);
}

static void recycle(struct ctp_thread *t, uint32_t idx)
{
	struct ctp_station *s = ctp_station_at(idx);
	if (idx == t->self || CTP_LOAD_RELAXED(&s->kind) == CTP_KIND_THREAD)
		return; /* a thread's own station lives as long as the thread */
	uint64_t lo = CTP_LOAD_RELAXED(&s->stack_lo);
	ctp_stackmap_remove(idx, lo, CTP_LOAD_RELAXED(&s->stack_hi));
	ctp_stack_base_forget(lo);
	ctp_station_free(idx);
}

void ctp_coro_end_and_switch(struct ctp_thread *t, uint32_t to, uint32_t how)
{
	int state = ctp_thread_enter(t);
	uint64_t now = ctp_now();
	uint32_t from = t->current;
	struct ctp_station *from_s = ctp_station_at(from);
	uint64_t from_coro = CTP_LOAD_RELAXED(&from_s->coro);
	/* The station first, naming the one resumed next: a thread stopped for good anywhere from
	 * here to that resume leaves a segment that says what it was going to run
	 * (ctp/unfinished_switch.h). */
	station_exit(from_s, now, to);
	emit_exit(t, now, from_coro, how);
	if (to != CTP_NO_STATION) {
		struct ctp_station *to_s = ctp_station_at(to);
		ctp_station_resume(to_s, t->tid, now);
		ctp_context_saved = 0;
		ctp_emit_switch_record(t, now, from_coro, CTP_LOAD_RELAXED(&to_s->coro), how,
				       UINT32_MAX, 0, NULL, 0);
		t->current = to;
		t->current_station = to_s;
	}
	recycle(t, from);
	ctp_thread_leave(t, state);
}

void ctp_coro_abandon(struct ctp_thread *t, uint32_t idx)
{
	int state = ctp_thread_enter(t);
	uint64_t now = ctp_now();
	struct ctp_station *s = ctp_station_at(idx);
	emit_exit(t, now, CTP_LOAD_RELAXED(&s->coro), 0);
	station_exit(s, now, CTP_NO_STATION);
	recycle(t, idx);
	ctp_thread_leave(t, state);
}

/* A coroutine whose thread is gone: the thread's own (how 0), or the one running on it then
 * (CTP_EXIT_WITH_THREAD): its stack is left as the thread's end left it, and never runs again.
 * Its station goes back to the pool, a coroutine's stack registration with it. */
static void end_with_thread(struct ctp_thread *t, uint32_t idx, uint64_t now)
{
	struct ctp_station *s = ctp_station_at(idx);
	bool own = CTP_LOAD_RELAXED(&s->kind) == CTP_KIND_THREAD;
	if (t->ring.ring) /* none in a fork child whose ring could not be had */
		emit_exit(t, now, CTP_LOAD_RELAXED(&s->coro), own ? 0 : CTP_EXIT_WITH_THREAD);
	station_exit(s, now, CTP_NO_STATION);
	if (own)
		ctp_station_free(idx);
	else
		recycle(t, idx);
}

void ctp_thread_end(struct ctp_thread *t)
{
	uint64_t now = ctp_now();
	/* A thread's own coroutine resumed here is its own thread's to end. */
	if (t->current != t->self && t->current != CTP_NO_STATION &&
	    CTP_LOAD_RELAXED(&t->current_station->kind) != CTP_KIND_THREAD) {
		end_with_thread(t, t->current, now);
		t->current = t->self;
		t->current_station = t->self_station;
	}
	end_with_thread(t, t->self, now);
}

void ctp_coro_end_in_fork_child(struct ctp_thread *t, uint32_t idx)
{
	int state = ctp_thread_enter(t);
	end_with_thread(t, idx, ctp_now());
	ctp_thread_leave(t, state);
}

#include "collector/deferred_stacks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector/records.h"
#include "ctp/atomics.h"
#include "ctp/stackwalk.h"
#include "ctp/station.h"
#include "ctp/xalloc.h"

enum walk_state {
	WALK_UNTRIED = 0,
	WALK_ON = 1,
	WALK_OFF = 2, /* refused, failed, or the memory is gone */
};

void ctp_deferred_memory_gone(struct ctp_proc *p)
{
	ctp_stackwalk_close(p->walker);
	p->walker = NULL;
	p->walk_state = WALK_OFF;
}

/* The station chunk that holds station idx. Chunks are equal in size and kept oldest first, in
 * the order of their stations' indices: the one at position idx / count is tried first, so
 * that a process with many chunks costs no scan. */
static bool chunk_of(struct ctp_proc *p, uint32_t idx, struct ctp_chunk_ref *out)
{
	size_t n = p->nchunks;
	if (!p->view.base || n == 0)
		return false;
	if (idx - p->chunk_hint.first < p->chunk_hint.count) {
		*out = p->chunk_hint;
		return true;
	}
	uint32_t per_chunk = p->chunks[0].ref.count;
	size_t guess = per_chunk ? idx / per_chunk : n;
	for (size_t pass = 0; pass < n + 1; pass++) {
		size_t i = pass == 0 ? guess : pass - 1;
		if (i >= n)
			continue;
		const struct ctp_chunk_ref *c = &p->chunks[i].ref;
		if (c->count && idx >= c->first && idx - c->first < c->count) {
			p->chunk_hint = *out = *c;
			return true;
		}
	}
	return false;
}

static bool station_by_index(struct ctp_proc *p, uint32_t idx, struct ctp_station_snapshot *out)
{
	struct ctp_chunk_ref ref;
	if (!chunk_of(p, idx, &ref))
		return false;
	ctp_station_read(ctp_chunk_station(&ref, idx - ref.first), ref.depth, out);
	return true;
}

/* A cheap look before a whole copy: most switches are long resumed when converted. */
static bool maybe_same_suspend(struct ctp_proc *p, uint32_t idx, uint64_t coro, uint32_t epoch)
{
	struct ctp_chunk_ref ref;
	if (!chunk_of(p, idx, &ref))
		return false;
	const struct ctp_station *s = ctp_chunk_station(&ref, idx - ref.first);
	return CTP_LOAD_RELAXED(&s->coro) == coro &&
	       CTP_LOAD_RELAXED(&s->state) == CTP_STATE_SUSPENDED &&
	       (uint32_t)CTP_LOAD_RELAXED(&s->switches) == epoch;
}

/* Whether snapshot s is coroutine coro still suspended at the same switch. */
static bool same_suspend(const struct ctp_station_snapshot *s, uint64_t coro, uint32_t epoch,
			 uint64_t call_site)
{
	return s->coro == coro && s->state == CTP_STATE_SUSPENDED &&
	       (uint32_t)s->switches == epoch && s->stack_len > 0 && s->frames[0] == call_site;
}

static struct ctp_stackwalk *walker(struct ctp_proc *p)
{
	if (p->walk_state == WALK_UNTRIED) {
		p->walker = ctp_stackwalk_open_pid(p->pid, ctp_read_pid_memory,
						   (void *)(uintptr_t)p->pid);
		p->walk_state = p->walker ? WALK_ON : WALK_OFF;
	}
	return p->walk_state == WALK_ON ? p->walker : NULL;
}

/* Reading the process was refused: Yama's ptrace scope without the process having named the
 * collector (it does, see preload/connection.c), a container, another user. */
static void refused(struct ctp_proc *p)
{
	static bool said;
	if (!said)
		fprintf(stderr,
			"ctp-collector: pid %u: may not read its memory (%s): the whole stacks of "
			"coroutines that stay suspended come only from the process itself, at its "
			"end; switches keep their call sites\n",
			p->pid, strerror(errno));
	said = true;
	ctp_deferred_memory_gone(p);
}

/* Where a suspend is, as a key: its call site and the stack pointer there (the stack's depth,
 * which tells apart the paths that lead to one call site), mixed into 64 bits. The stack
 * pointer may be any fixed point of the suspend's frame: the saved context's address when that
 * lies on the stack, else the saved stack pointer. */
static uint64_t place_key(uint64_t call_site, uint64_t sp)
{
	uint64_t k = call_site * 0x9e3779b97f4a7c15ull ^ sp;
	k ^= k >> 29;
	return k * 0xbf58476d1ce4e5b9ull | 1; /* never 0: 0 is an empty entry */
}

/* Where the return addresses of a stack the collector unwound lay, as offsets from the anchor of
 * the place it was unwound at (the stack pointer there, see place_key): the words to read again
 * to know whether a coroutine back at that place has the same stack. The first walk's, per
 * stack id. */
struct ctp_walked_layout {
	uint32_t n; /* frames 1 .. n - 1 are checked; frame 0 is the call site itself */
	struct {
		uint64_t pc;
		uint64_t off;
	} frame[]; /* [n], frame[0] unused */
};

/* An anchor's offset to a return address lies within a stack: anything else is no layout. */
enum { LAYOUT_SPAN_MAX = 1u << 30 };

static void note_layout(struct ctp_proc *p, uint32_t id, uint64_t anchor, const uint64_t *pcs,
			const uint64_t *slots, uint32_t n)
{
	if (id - 1 < p->layouts_cap && p->layouts[id - 1])
		return;
	for (uint32_t k = 1; k < n; k++)
		if (slots[k] <= anchor || slots[k] - anchor >= LAYOUT_SPAN_MAX)
			return;
	if (id > p->layouts_cap) {
		size_t cap = p->layouts_cap ? p->layouts_cap : 64;
		while (cap < id)
			cap *= 2;
		p->layouts = ctp_xrealloc(p->layouts, cap * sizeof(*p->layouts));
		memset(p->layouts + p->layouts_cap, 0,
		       (cap - p->layouts_cap) * sizeof(*p->layouts));
		p->layouts_cap = cap;
	}
	struct ctp_walked_layout *l = ctp_xcalloc(1, sizeof(*l) + n * sizeof(l->frame[0]));
	l->n = n;
	for (uint32_t k = 1; k < n; k++) {
		l->frame[k].pc = pcs[k];
		l->frame[k].off = slots[k] - anchor;
	}
	p->layouts[id - 1] = l;
}

void ctp_deferred_free(struct ctp_proc *p)
{
	for (size_t i = 0; i < p->layouts_cap; i++)
		free(p->layouts[i]);
	free(p->layouts);
	p->layouts = NULL;
	p->layouts_cap = 0;
}

/* Whether stack `id` is still what lies in memory above `anchor`: each of its return addresses
 * where the walk found it. One read of the process, instead of a walk. */
static bool still_laid_out(struct ctp_proc *p, uint32_t id, uint64_t anchor)
{
	const struct ctp_walked_layout *l = id - 1 < p->layouts_cap ? p->layouts[id - 1] : NULL;
	if (!l)
		return false;
	uint64_t addrs[CTP_MAX_STACK_DEPTH], words[CTP_MAX_STACK_DEPTH];
	uint32_t m = l->n - 1;
	for (uint32_t k = 0; k < m; k++)
		addrs[k] = anchor + l->frame[k + 1].off;
	if (!ctp_read_pid_words(p->pid, addrs, m, words))
		return false;
	for (uint32_t k = 0; k < m; k++)
		if (words[k] != l->frame[k + 1].pc)
			return false;
	return true;
}

/* The stack coroutine c had the last times it was unwound at this place, if it is still the
 * one in memory; 0 otherwise. A coroutine that suspends again and again at one place (a
 * server's read, a channel's pop) mostly has the same stack there, but not always: two callers
 * whose frames are equal in size reach a call site at the same depth. */
static uint32_t walked_before(struct ctp_proc *p, struct ctp_coro *c, uint64_t key, uint64_t anchor)
{
	if (!c || !key)
		return 0;
	for (int k = 0; k < 2; k++)
		if (c->walked_key[k] == key)
			return still_laid_out(p, c->walked_stack[k], anchor) ? c->walked_stack[k]
									     : 0;
	return 0;
}

static void note_walked(struct ctp_coro *c, uint64_t key, uint32_t stack)
{
	if (!c)
		return;
	if (c->walked_key[0] != key) {
		c->walked_key[1] = c->walked_key[0];
		c->walked_stack[1] = c->walked_stack[0];
		c->walked_key[0] = key;
	}
	c->walked_stack[0] = stack;
}

/* The interned whole stack of snapshot s, unwound from its saved context in the live process
 * (or known from an earlier unwind at the same place); 0 when it cannot be had. */
static uint32_t walk_remote(struct ctp_proc *p, struct ctp_coro *c,
			    const struct ctp_station_snapshot *s, uint32_t station)
{
	struct ctp_stackwalk *w = walker(p);
	int depth = ctp_proc_stack_depth(p);
	if (!w || s->ctx_kind == CTP_CTX_NONE || depth <= 1)
		return 0;
	/* A context saved on the coroutine's own stack (an fcontext, a SimGrid raw context) tells
	 * the depth by its own address: the place is known without reading the process. */
	bool ctx_on_stack = s->saved_ctx >= s->stack_lo && s->saved_ctx < s->stack_hi;
	uint64_t anchor = ctx_on_stack ? s->saved_ctx : 0;
	uint64_t key = ctx_on_stack ? place_key(s->frames[0], anchor) : 0;
	uint32_t id = walked_before(p, c, key, anchor);
	if (id)
		return id;
	struct ctp_regs regs;
	void *pid_arg = (void *)(uintptr_t)p->pid;
	if (!ctp_regs_from_context(ctp_read_pid_memory, pid_arg, s->ctx_kind, s->saved_ctx,
				   &regs)) {
		if (errno == EPERM)
			refused(p);
		else if (errno == ESRCH)
			ctp_deferred_memory_gone(p);
		return 0;
	}
	if (!ctx_on_stack) {
		anchor = regs.rsp;
		key = place_key(s->frames[0], anchor);
		if ((id = walked_before(p, c, key, anchor)))
			return id;
	}
	uint64_t frames[CTP_MAX_STACK_DEPTH], slots[CTP_MAX_STACK_DEPTH];
	uint32_t n = ctp_stackwalk_run_slots(w, &regs, s->stack_lo, s->stack_hi, s->frames[0],
					     frames, slots, (uint32_t)depth);
	/* The walk raced with a resume: it may have read a mix of two stacks. */
	struct ctp_station_snapshot after;
	if (n <= 1 || !station_by_index(p, station, &after) ||
	    !same_suspend(&after, s->coro, (uint32_t)s->switches, s->frames[0]))
		return 0;
	id = ctp_proc_intern_stack(p, frames, n);
	note_layout(p, id, anchor, frames, slots, n);
	note_walked(c, key, id);
	return id;
}

void ctp_deferred_note_queued(struct ctp_proc *p, const struct ctp_rec *rec)
{
	struct ctp_rec_switch sw;
	if (rec->type != CTP_REC_SWITCH || rec->size < sizeof(sw))
		return;
	memcpy(&sw, rec, sizeof(sw));
	if (!sw.from || sw.from_station == UINT32_MAX)
		return;
	struct ctp_queued_suspend *q = ctp_deferred_queued_slot(p, sw.from);
	/* The latest, by epoch: one ring's records may be queued after a later ring's. */
	if (q->coro != sw.from || (int32_t)(sw.from_switches - q->epoch) > 0)
		*q = (struct ctp_queued_suspend){sw.from, sw.from_switches};
}

/* ctp_deferred_stack past its inline part: the station may still show the suspend. */
uint32_t ctp_deferred_stack_of_station(struct ctp_proc *p, uint64_t coro, uint32_t station,
				       uint32_t epoch, uint64_t call_site)
{
	struct ctp_station_snapshot s;
	if (!maybe_same_suspend(p, station, coro, epoch) || !station_by_index(p, station, &s) ||
	    !same_suspend(&s, coro, epoch, call_site))
		return 0;
	struct ctp_coro *c = ctp_coro_find(&p->coros, coro);
	uint32_t id = 0;
	if (s.stack_kind == CTP_STACK_DEFERRED && s.stack_len > 1)
		id = ctp_proc_intern_stack(p, s.frames, s.stack_len);
	else if (s.stack_kind == CTP_STACK_CALL_SITE)
		id = walk_remote(p, c, &s, station);
	if (id && c) {
		c->deferred_stack = id;
		c->deferred_epoch = epoch;
	}
	return id;
}

uint32_t ctp_deferred_state_stack(struct ctp_proc *p, uint32_t idx,
				  const struct ctp_station_snapshot *s, uint32_t *walks_left)
{
	/* The same suspend as the last switch line that got a whole stack: that stack, so that the
	 * two lines agree (the station's may come from the other unwinder, at the end). */
	struct ctp_coro *c = ctp_coro_find(&p->coros, s->coro);
	if (c && c->deferred_stack && c->deferred_epoch == (uint32_t)s->switches)
		return c->deferred_stack;
	if (s->stack_len == 0)
		return 0;
	/* A suspend whose switch the collector has not converted yet (a snapshot taken right
	 * after it): unwound now, as its switch line will be, rather than left at its call site
	 * (a report of that snapshot would tell apart coroutines stuck at the same place). */
	if (walks_left && *walks_left && s->state == CTP_STATE_SUSPENDED &&
	    s->stack_kind == CTP_STACK_CALL_SITE) {
		(*walks_left)--;
		uint32_t id = walk_remote(p, c, s, idx);
		if (id && c) {
			c->deferred_stack = id;
			c->deferred_epoch = (uint32_t)s->switches;
		}
		if (id)
			return id;
	}
	return ctp_proc_intern_stack(p, s->frames, s->stack_len);
}

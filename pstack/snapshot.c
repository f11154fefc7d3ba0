#include "pstack/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "ctp/atomics.h"
#include "ctp/clock.h"
#include "ctp/station.h"
#include "ctp/unfinished_switch.h"
#include "ctp/xalloc.h"
#include "pstack/suspend_stack.h"

struct walk {
	struct pstack_source *src;
	struct pstack_snapshot *snap;
	struct pstack_unwinder unwinder;
	struct ctp_station_snapshot s; /* big: one copy, reused for every station */
	/* Stations the process ever handed out. The slots past them were never written, and
	 * reading them through the mapping of a live process's segment would make the kernel put
	 * pages of zeros into it: memory the program would hold from then on. */
	uint32_t handed_out;
	/* A core's: what its threads were stopped in the middle of (ctp/unfinished_switch.h), or
	 * NULL for a live process, whose switches go on. */
	struct ctp_unfinished_switches *unfinished;
};

/* `live` is the station of which w->s is a copy; it has `depth` frames. */
static void add_coro(struct walk *w, const struct ctp_station *live, uint32_t depth)
{
	struct pstack_snapshot *snap = w->snap;
	const struct ctp_station_snapshot *s = &w->s;
	if (snap->ncoros == snap->cap) {
		snap->cap = snap->cap ? snap->cap * 2 : 1024;
		snap->coros = ctp_xrealloc(snap->coros, snap->cap * sizeof(*snap->coros));
	}
	struct pstack_coro *c = &snap->coros[snap->ncoros++];
	memset(c, 0, sizeof(*c));
	c->coro = s->coro;
	c->entry = s->entry;
	c->since_raw = s->last_switch ? s->last_switch : s->created;
	c->created_raw = s->created;
	c->switches = s->switches;
	c->state = s->state;
	c->kind = s->kind;
	c->tid = s->tid;
	c->wait_fd = -1;
	c->torn = s->torn;
	snap->torn += s->torn;
	/* A running coroutine's wait is over, even when it has not switched since (a thread's own
	 * stack that got EAGAIN and went on to poll): only a coroutine that is not running waits.
	 */
	if (s->state != CTP_STATE_RUNNING &&
	    ctp_wait_current(s->wait_fd, s->wait_op, s->switches)) {
		c->wait_fd = s->wait_fd;
		c->wait_op = s->wait_op & CTP_WAIT_OP_MASK;
		c->wait_closed = (s->wait_op & CTP_WAIT_CLOSED) != 0;
	}
	uint64_t pcs[CTP_MAX_STACK_DEPTH];
	uint32_t n = pstack_suspend_stack(&w->unwinder, live, depth, s, pcs, CTP_MAX_STACK_DEPTH);
	if (n == 0)
		return;
	bool reaches_start = ctp_view_frames_as_untraced(&w->src->view, pcs, n);
	bool is_new;
	c->stack = ctp_stack_intern(&snap->stacks, pcs, n, &is_new);
	if (is_new) {
		snap->stack_refs = ctp_xrealloc(
			snap->stack_refs, (snap->nstack_refs + 1) * sizeof(*snap->stack_refs));
		snap->stack_refs[snap->nstack_refs++] = (struct pstack_stack_ref){
			.frames_at = snap->stacks.arena_len - n,
			.n = n,
			.reaches_start = reaches_start,
		};
	}
}

/* Calls visit for every station of the block that holds a coroutine, with its copy in w->s. */
static void each_station(struct walk *w, struct ctp_block *b, uint64_t off,
			 void (*visit)(struct walk *w, uint32_t idx, const struct ctp_station *st,
				       uint32_t depth))
{
	struct ctp_chunk_ref ref;
	if (CTP_LOAD_RELAXED(&b->kind) != CTP_BLOCK_STATIONS ||
	    !ctp_view_station_chunk(&w->src->view, (const struct ctp_header *)w->src->view.base, b,
				    off, &ref) ||
	    ref.first >= w->handed_out)
		return;
	uint32_t upto =
		w->handed_out - ref.first < ref.count ? w->handed_out - ref.first : ref.count;
	for (uint32_t k = 0; k < upto; k++) {
		const struct ctp_station *st = ctp_chunk_station(&ref, k);
		/* A cheap look first: most slots of a chunk may be free. */
		if (CTP_LOAD_RELAXED(&st->state) == CTP_STATE_FREE)
			continue;
		ctp_station_read(st, ref.depth, &w->s); /* w->s.torn says if it could not */
		if (w->s.coro == 0 || w->s.state == CTP_STATE_FREE || w->s.state > CTP_STATE_LEFT)
			continue;
		visit(w, ref.first + k, st, ref.depth);
	}
}

static void take_station(struct walk *w, uint32_t idx, const struct ctp_station *st, uint32_t depth)
{
	if (w->s.state == CTP_STATE_EXITED) {
		w->snap->ended++;
		return;
	}
	uint32_t tid;
	if (w->unfinished && ctp_unfinished_was_running(w->unfinished, idx, &w->s, &tid)) {
		/* Its thread was stopped in the switch that left it, or in the end before its
		 * resume: it runs there, and the thread's registers hold its stack. */
		w->s.state = CTP_STATE_RUNNING;
		w->s.tid = tid;
	}
	add_coro(w, st, depth);
}

static void note_station(struct walk *w, uint32_t idx, const struct ctp_station *st, uint32_t depth)
{
	(void)st;
	(void)depth;
	ctp_unfinished_note(w->unfinished, idx, &w->s);
}

static void visit_block(void *ctx, struct ctp_block *b, uint64_t off)
{
	each_station(ctx, b, off, take_station);
}

static void note_block(void *ctx, struct ctp_block *b, uint64_t off)
{
	each_station(ctx, b, off, note_station);
}

static int by_id(const void *a, const void *b)
{
	const struct pstack_coro *x = a, *y = b;
	return (x->coro > y->coro) - (x->coro < y->coro);
}

/* The latest clock reading of the stations: a core's "now" when it cannot be had otherwise. */
static uint64_t latest_raw(const struct pstack_snapshot *snap)
{
	uint64_t latest = 0;
	for (size_t i = 0; i < snap->ncoros; i++)
		if (snap->coros[i].since_raw > latest)
			latest = snap->coros[i].since_raw;
	return latest;
}

void pstack_snapshot_take(struct pstack_source *src, struct pstack_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	uint64_t t0 = ctp_monotonic_ns();
	uint64_t head = pstack_source_head(src);
	const struct ctp_header *h = (const struct ctp_header *)src->view.base;
	snap->pid = h->pid;
	snap->stack_depth = CTP_LOAD_RELAXED(&h->stack_depth);
	snap->stations_lost = CTP_LOAD_RELAXED(&h->stations_lost);
	snap->start_mono_ns = CTP_LOAD_RELAXED(&h->start_mono_ns);
	struct walk *w = ctp_xcalloc(1, sizeof(*w));
	w->src = src;
	w->snap = snap;
	w->unwinder.src = src;
	w->handed_out = CTP_LOAD_ACQUIRE(&h->station_count);
	struct ctp_unfinished_switches unfinished;
	ctp_unfinished_init(&unfinished);
	if (src->core) {
		w->unfinished = &unfinished;
		ctp_view_blocks_from(&src->view, head, note_block, w);
		ctp_unfinished_settle(&unfinished);
	}
	ctp_view_blocks_from(&src->view, head, visit_block, w);
	ctp_unfinished_free(&unfinished);
	pstack_unwinder_close(&w->unwinder);
	free(w);
	/* The clock is read after the stations: no switch they saw lies in its future. */
	struct pstack_now now;
	pstack_source_now(src, latest_raw(snap), &now);
	snap->now_raw = now.raw;
	snap->now_mono_ns = now.mono_ns;
	snap->ns_per_tick = now.ns_per_tick;
	snap->now_at_latest_switch = now.at_latest_switch;
	snap->read_ns = ctp_monotonic_ns() - t0;
	if (snap->ncoros > 1) /* no array at all without coroutines: qsort wants one */
		qsort(snap->coros, snap->ncoros, sizeof(*snap->coros), by_id);
}

void pstack_snapshot_free(struct pstack_snapshot *snap)
{
	free(snap->coros);
	free(snap->stack_refs);
	ctp_stack_table_free(&snap->stacks);
	memset(snap, 0, sizeof(*snap));
}

const uint64_t *pstack_stack_frames(const struct pstack_snapshot *snap, uint32_t id, uint32_t *n,
				    bool *reaches_start)
{
	const struct pstack_stack_ref *r = &snap->stack_refs[id - 1];
	*n = r->n;
	if (reaches_start)
		*reaches_start = r->reaches_start;
	return snap->stacks.arena + r->frames_at;
}

uint64_t pstack_ago_ns(const struct pstack_snapshot *snap, uint64_t raw)
{
	if (raw >= snap->now_raw)
		return 0;
	return (uint64_t)((double)(snap->now_raw - raw) * snap->ns_per_tick);
}

uint64_t pstack_mono_ns(const struct pstack_snapshot *snap, uint64_t raw)
{
	uint64_t ago = pstack_ago_ns(snap, raw);
	return snap->now_mono_ns > ago ? snap->now_mono_ns - ago : 0;
}

#include "collector/records.h"

#include <string.h>

#include "collector/deferred_stacks.h"
#include "ctp/atomics.h"
#include "ctp/names.h"

int ctp_proc_stack_depth(const struct ctp_proc *p)
{
	if (!p->view.base)
		return -1;
	/* Checked against CTP_MAX_STACK_DEPTH when the segment was opened; written once. */
	const struct ctp_header *h = (const struct ctp_header *)p->view.base;
	return (int)CTP_LOAD_RELAXED(&h->stack_depth);
}

void ctp_proc_coro_end(struct ctp_proc *p, struct ctp_coro *c, uint32_t how, uint32_t switch_how,
		       uint32_t tid, uint64_t ts)
{
	if (c->flags & CTP_CORO_ENDED)
		return;
	c->flags |= CTP_CORO_ENDED;
	struct ctp_coro_end_line l = {
		.pid = p->pid,
		.coro = c->id,
		.tid = tid,
		.has_ts = ts != 0,
		.ts = ts,
		.how = how,
		.switch_how = switch_how,
	};
	ctp_emit_coro_end(&p->c->em, &l);
}

const struct ctp_sym *ctp_proc_symbol(struct ctp_proc *p, uint64_t addr, bool return_address)
{
	const struct ctp_sym *s = ctp_symcache_lookup(
		&p->syms, p->c->sym, p->view.base ? &p->modules : NULL, addr, return_address);
	for (; p->modules_written < p->syms.nmods; p->modules_written++)
		ctp_emit_module(&p->c->em, p->pid, &p->syms.mods[p->modules_written]);
	return s;
}

/* A record's frame count is one byte: no stack is longer. */
enum { STACK_MAX = 256 };

/* Where a stack of one frame is cached. */
static struct ctp_one_frame_stack *one_frame_slot(struct ctp_proc *p, uint64_t frame)
{
	uint64_t h = frame * 0x9e3779b97f4a7c15ull;
	return &p->one_frame[(h >> 32) & (CTP_PROC_ONE_FRAME_STACKS - 1)];
}

/* Interns a stack not found in the cache of one-frame stacks (`cached`: where it goes, for a
 * stack of one frame, else NULL). Out of line: ctp_proc_intern_stack's cache hit is most calls. */
static __attribute__((noinline)) uint32_t intern_uncached(struct ctp_proc *p, const uint64_t *given,
							  uint32_t n,
							  struct ctp_one_frame_stack *cached)
{
	uint64_t frames[STACK_MAX];
	if (n > STACK_MAX)
		n = STACK_MAX;
	memcpy(frames, given, n * sizeof(*frames));
	bool reaches_start = p->view.base && ctp_view_frames_as_untraced(&p->view, frames, n);
	bool is_new;
	uint32_t id = ctp_stack_intern(&p->stacks, frames, n, &is_new);
	if (is_new) {
		const struct ctp_sym *syms[STACK_MAX];
		/* Every entry must outlive the loop: no growth of the cache in between. */
		ctp_symcache_reserve(&p->syms, n);
		for (uint32_t i = 0; i < n; i++)
			syms[i] = ctp_proc_symbol(p, frames[i], true);
		ctp_emit_stack(&p->c->em, p->pid, id, reaches_start, frames, syms, n);
	}
	if (cached)
		*cached = (struct ctp_one_frame_stack){.frame = given[0], .id = id};
	return id;
}

/* A frame maps to one id for the process's whole life: the trampoline's range and the address
 * it stands for (header.entry_tramp_*) are written once, before any coroutine can run in it,
 * so a frame in that range is never seen before they are, and one outside it never changes. */
uint32_t ctp_proc_intern_stack(struct ctp_proc *p, const uint64_t *given, uint32_t n)
{
	struct ctp_one_frame_stack *cached = NULL;
	if (n == 1) {
		cached = one_frame_slot(p, given[0]);
		if (cached->id && cached->frame == given[0])
			return cached->id;
	}
	return intern_uncached(p, given, n, cached);
}

struct ctp_state_line ctp_proc_state_line(struct ctp_proc *p, uint32_t idx,
					  const struct ctp_station_snapshot *s, uint32_t state,
					  uint32_t *walks_left)
{
	struct ctp_state_line l = {
		.pid = p->pid,
		.coro = s->coro,
		.state = state,
		.tid = s->tid,
		.has_since = true,
		.since = ctp_proc_ts(p, s->last_switch ? s->last_switch : s->created),
		.switches = s->switches,
		.wait_fd = s->wait_fd,
		.wait_op = s->wait_op,
	};
	if (state == CTP_STATE_RUNNING || state == CTP_STATE_EXITED)
		l.wait_fd = -1;
	if (state == CTP_STATE_SUSPENDED)
		l.stack = ctp_deferred_state_stack(p, idx, s, walks_left);
	return l;
}

void ctp_proc_each_station(struct ctp_proc *p, ctp_station_fn fn, void *ctx)
{
	if (!p->view.base)
		return;
	struct ctp_station_snapshot snap;
	/* Only the indices handed out so far: the rest of a chunk was never written, and reading
	 * it would only make the kernel fill the segment's file with zero pages. */
	const struct ctp_header *h = (const struct ctp_header *)p->view.base;
	uint32_t handed_out = CTP_LOAD_ACQUIRE(&h->station_count);
	for (size_t i = 0; i < p->nchunks; i++) {
		/* A copy: fn may look a symbol up, which may find chunks added since, and the
		 * array may move (the windows do not). */
		struct ctp_chunk_ref ref = p->chunks[i].ref;
		if (ref.count == 0 || ref.first >= handed_out)
			continue;
		uint32_t upto =
			handed_out - ref.first < ref.count ? handed_out - ref.first : ref.count;
		for (uint32_t k = 0; k < upto; k++) {
			struct ctp_station *s = ctp_chunk_station(&ref, k);
			/* A cheap look first: most slots are free or hold other coroutines. */
			uint32_t state = CTP_LOAD_RELAXED(&s->state);
			if (state == CTP_STATE_FREE)
				continue;
			/* A station that stays torn (its writer died mid-update) is still the
			 * best knowledge there is: use the last copy. */
			ctp_station_read(s, ref.depth, &snap);
			if (snap.coro == 0 || snap.state == CTP_STATE_FREE ||
			    snap.state > CTP_STATE_LEFT)
				continue;
			fn(p, ref.first + k, &snap, ctx);
		}
	}
}

struct find_ctx {
	uint64_t id;
	bool found;
	struct ctp_station_snapshot *out;
};

static void find_visit(struct ctp_proc *p, uint32_t idx, const struct ctp_station_snapshot *s,
		       void *ctx)
{
	(void)p;
	(void)idx;
	struct find_ctx *f = ctx;
	if (!f->found && s->coro == f->id) {
		*f->out = *s;
		f->found = true;
	}
}

bool ctp_proc_find_station(struct ctp_proc *p, uint64_t id, struct ctp_station_snapshot *out)
{
	struct find_ctx f = {.id = id, .out = out};
	ctp_proc_each_station(p, find_visit, &f);
	return f.found;
}

void ctp_proc_announce_station(struct ctp_proc *p, struct ctp_coro *c,
			       const struct ctp_station_snapshot *s)
{
	if (c->flags & CTP_CORO_ANNOUNCED)
		return;
	/* Never seen in an event (all its records were lost): announce it from its station. */
	struct ctp_coro_line l = {
		.pid = p->pid,
		.coro = s->coro,
		.kind = s->kind,
		.entry_addr = s->entry,
		.tid = s->tid,
		.has_ts = true,
		.ts = ctp_proc_ts(p, s->created),
	};
	if (s->entry)
		l.entry = ctp_proc_symbol(p, s->entry, false)->sym;
	c->flags |= CTP_CORO_ANNOUNCED;
	ctp_emit_coro(&p->c->em, &l);
}

void ctp_proc_announce_unknown(struct ctp_proc *p, struct ctp_coro *c)
{
	/* Zeroed, though read only when found: at -O3 GCC cannot see that, and -Werror stops
	 * the build (a rare path: a coroutine no event named). */
	struct ctp_station_snapshot s = {0};
	struct ctp_coro_line l = {.pid = p->pid, .coro = c->id};
	if (ctp_proc_find_station(p, c->id, &s)) {
		l.kind = s.kind;
		if (s.kind == CTP_KIND_THREAD)
			c->flags |= CTP_CORO_THREAD;
		l.entry_addr = s.entry;
		if (s.entry)
			l.entry = ctp_proc_symbol(p, s.entry, false)->sym;
		l.tid = s.tid;
		l.has_ts = true;
		l.ts = ctp_proc_ts(p, s.created);
		if (c->tid == 0)
			c->tid = s.tid;
	}
	c->flags |= CTP_CORO_ANNOUNCED;
	ctp_emit_coro(&p->c->em, &l);
}

/* The record of a coroutine an event names, announced if it was never seen; NULL for one that
 * ended and left the table (a record that names it after its end: a close that names it as a
 * waiter, a garbled id). The slots must have room (ctp_coro_table_reserve) when the caller holds
 * other records. */
static inline __attribute__((always_inline)) struct ctp_coro *known(struct ctp_proc *p, uint64_t id)
{
	/* The table first: a coroutine that ended has left it (retire), and nearly every id an
	 * event names is of one that has not. */
	struct ctp_coro *c = ctp_coro_find(&p->coros, id);
	if (!c) {
		if (ctp_ended_coros_has(&p->ended, id))
			return NULL;
		c = ctp_coro_insert(&p->coros, id);
	}
	if (!(c->flags & CTP_CORO_ANNOUNCED))
		ctp_proc_announce_unknown(p, c);
	return c;
}

/* The interned stack of a record's frames; 0 when there are none. */
static uint32_t record_stack(struct ctp_proc *p, const uint64_t *frames, uint32_t n)
{
	return n ? ctp_proc_intern_stack(p, frames, n) : 0;
}

static void on_thread(struct ctp_visit_ctx *v, const struct ctp_rec_thread *r)
{
	struct ctp_proc *p = v->p;
	v->rs->tid = r->tid;
	uint64_t coro = r->coro;
	if (!coro)
		return;
	bool is_new;
	struct ctp_coro *c = ctp_coro_get(&p->coros, coro, &is_new);
	if (c->flags & CTP_CORO_ANNOUNCED)
		return;
	c->flags |= CTP_CORO_ANNOUNCED | CTP_CORO_THREAD;
	c->state = CTP_STATE_RUNNING;
	c->switches = 1; /* its start, as its station counts it (the state line's `switches`) */
	c->tid = r->tid;
	c->since = ctp_proc_ts(p, r->ts);
	struct ctp_coro_line l = {
		.pid = p->pid,
		.coro = coro,
		.kind = CTP_KIND_THREAD,
		.tid = r->tid,
		.has_ts = true,
		.ts = c->since,
	};
	ctp_emit_coro(&p->c->em, &l);
}

static void on_create(struct ctp_visit_ctx *v, const struct ctp_rec_create *r, uint32_t nframes)
{
	struct ctp_proc *p = v->p;
	uint64_t coro = r->coro;
	if (!coro)
		return;
	bool is_new;
	struct ctp_coro *c = ctp_coro_get(&p->coros, coro, &is_new);
	if (c->flags & CTP_CORO_ANNOUNCED)
		return; /* an event on another thread's ring named it first */
	c->flags |= CTP_CORO_ANNOUNCED;
	if (r->h.aux == CTP_KIND_THREAD)
		c->flags |= CTP_CORO_THREAD;
	c->state = CTP_STATE_CREATED;
	c->tid = v->rs->tid;
	c->since = ctp_proc_ts(p, r->ts);
	struct ctp_coro_line l = {
		.pid = p->pid,
		.coro = coro,
		.kind = r->h.aux,
		.entry_addr = r->entry,
		.parent = r->parent,
		.tid = v->rs->tid,
		.has_ts = true,
		.ts = c->since,
	};
	if (l.entry_addr)
		l.entry = ctp_proc_symbol(p, l.entry_addr, false)->sym;
	/* Interning may write a stack line: before the coro line, and before `c` could move. */
	l.stack = record_stack(p, r->frames, nframes);
	ctp_emit_coro(&p->c->em, &l);
}

/* A coroutine that ended, once its last event is converted: the switch that left it, or its end
 * when no switch of its own ended it. Its final state line is written from the log of ended
 * coroutines at the process's end. Moves the table's records. */
static void retire(struct ctp_proc *p, const struct ctp_coro *c)
{
	struct ctp_ended_coro e = {
		.id = c->id, .since = c->since, .tid = c->tid, .switches = c->switches};
	ctp_ended_coros_add(&p->ended, &e);
	ctp_coro_remove(&p->coros, e.id);
}

static void on_switch(struct ctp_visit_ctx *v, const struct ctp_rec_switch *r, uint32_t nframes)
{
	struct ctp_proc *p = v->p;
	uint64_t ts = ctp_proc_ts(p, r->ts);
	uint32_t how = r->h.aux;
	uint32_t tid = v->rs->tid;
	ctp_coro_table_reserve(&p->coros, 2);
	struct ctp_coro *from = r->from ? known(p, r->from) : NULL;
	uint32_t stack = 0;
	/* Only the call site was recorded: the whole stack if `from` is still suspended there. */
	if (nframes == 1 && from)
		stack = ctp_deferred_stack(p, r->from, r->from_station, r->from_switches,
					   r->frames[0]);
	if (!stack)
		stack = record_stack(p, r->frames, nframes);

	if (from) {
		from->state = how == CTP_HOW_RETURN ? CTP_STATE_EXITED : CTP_STATE_SUSPENDED;
		from->since = ts;
		from->tid = tid;
	}
	struct ctp_coro *to = r->to ? known(p, r->to) : NULL;
	if (to) {
		to->state = CTP_STATE_RUNNING;
		to->since = ts;
		to->tid = tid;
		if (to->switches != UINT32_MAX)
			to->switches++;
	}
	ctp_emit_switch(&p->c->em, p->pid, tid, ts, r->from, r->to, how, stack);
	if (from && (from->flags & CTP_CORO_ENDED))
		retire(p, from);
}

/* How an EXIT record's `how` (aux) ended the coroutine (docs/trace-format.md, `coro_end`): the
 * preload writes the switch that ended it (a makecontext return, Boost's last switch away), or
 * 0 when the coroutine did not end by a switch of its own: a thread's coroutine at the thread's
 * exit, any other one when a new coroutine took over its stack; CTP_EXIT_WITH_THREAD for one
 * that was running when its thread exited. */
static uint32_t end_how_of(const struct ctp_coro *c, uint32_t aux)
{
	switch (aux) {
	case CTP_HOW_RETURN:
		return CTP_END_RETURNED;
	case CTP_HOW_JUMP_FCONTEXT:
	case CTP_HOW_ONTOP_FCONTEXT:
		return CTP_END_ENDED;
	case 0:
		return c->flags & CTP_CORO_THREAD ? CTP_END_THREAD_EXIT : CTP_END_ABANDONED;
	case CTP_EXIT_WITH_THREAD:
		return CTP_END_THREAD_EXIT;
	}
	return CTP_END_UNKNOWN;
}

static void on_coro_exit(struct ctp_visit_ctx *v, const struct ctp_rec_exit *r)
{
	struct ctp_proc *p = v->p;
	if (!r->coro)
		return;
	struct ctp_coro *c = known(p, r->coro);
	if (!c)
		return;
	c->state = CTP_STATE_EXITED;
	c->since = ctp_proc_ts(p, r->ts);
	uint32_t how = end_how_of(c, r->h.aux);
	/* Ended with its thread: on that thread, which in a fork child is not the one recording. */
	uint32_t tid = how == CTP_END_THREAD_EXIT && c->tid ? c->tid : v->rs->tid;
	ctp_proc_coro_end(p, c, how, how == CTP_END_ENDED ? r->h.aux : 0, tid, c->since);
	/* A switch of its own that ended it follows (and retires it); else this was its last. */
	if (r->h.aux == 0 || r->h.aux == CTP_EXIT_WITH_THREAD)
		retire(p, c);
}

static void on_fd(struct ctp_visit_ctx *v, const struct ctp_rec_fd *r, uint32_t nframes)
{
	struct ctp_proc *p = v->p;
	if (!r->coro)
		return;
	uint32_t stack = record_stack(p, r->frames, nframes);
	ctp_coro_table_reserve(&p->coros, 2);
	known(p, r->coro);
	/* The waiter of a close or readiness; the epoll fd of a registration. */
	bool names_waiter = r->h.aux == CTP_FD_CLOSE || r->h.aux == CTP_FD_READY;
	if (names_waiter && r->arg)
		known(p, r->arg);
	struct ctp_fd_line l = {
		.pid = p->pid,
		.tid = v->rs->tid,
		.ts = ctp_proc_ts(p, r->ts),
		.coro = r->coro,
		.fd = r->fd,
		.event = r->h.aux,
		.op = r->op,
		.waiter = names_waiter ? r->arg : 0,
		.epfd = r->h.aux == CTP_FD_REGISTER || r->h.aux == CTP_FD_UNREGISTER
				? (int64_t)(int32_t)r->arg
				: -1,
		.stack = stack,
	};
	ctp_emit_fd(&p->c->em, &l);
}

void ctp_records_visit(struct ctp_visit_ctx *v, const struct ctp_rec *rec, size_t avail)
{
	if (avail < sizeof(*rec) || rec->size < sizeof(*rec) || rec->size > avail) {
		v->malformed++;
		return;
	}
	uint32_t nframes = rec->nframes;
	size_t fixed;
	switch (rec->type) {
	case CTP_REC_THREAD:
		fixed = sizeof(struct ctp_rec_thread);
		nframes = 0;
		break;
	case CTP_REC_CREATE:
		fixed = sizeof(struct ctp_rec_create);
		break;
	case CTP_REC_SWITCH:
		fixed = sizeof(struct ctp_rec_switch);
		break;
	case CTP_REC_EXIT:
		fixed = sizeof(struct ctp_rec_exit);
		nframes = 0;
		break;
	case CTP_REC_FD:
		fixed = sizeof(struct ctp_rec_fd);
		break;
	default:
		return; /* kinds added later: not written yet */
	}
	if (fixed + 8u * nframes > rec->size) {
		v->malformed++;
		return;
	}
	switch (rec->type) {
	case CTP_REC_THREAD:
		on_thread(v, (const struct ctp_rec_thread *)rec);
		break;
	case CTP_REC_CREATE:
		on_create(v, (const struct ctp_rec_create *)rec, nframes);
		break;
	case CTP_REC_SWITCH:
		on_switch(v, (const struct ctp_rec_switch *)rec, nframes);
		break;
	case CTP_REC_EXIT:
		on_coro_exit(v, (const struct ctp_rec_exit *)rec);
		break;
	case CTP_REC_FD:
		on_fd(v, (const struct ctp_rec_fd *)rec, nframes);
		break;
	}
}

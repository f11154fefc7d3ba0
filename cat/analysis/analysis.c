/* The model of a trace, built event by event (cat/model/event.h). Lines of different threads
 * reach the trace in the order their rings were harvested, not in time order, so everything
 * here compares the events' own times (`ts`) rather than trusting their order. */
#include <stdlib.h>
#include <string.h>

#include "cat/analysis/analysis_internal.h"
#include "cat/model/grow.h"
#include "ctp/names.h"
#include "ctp/segment.h"

void ctp_analysis_options_default(struct ctp_analysis_options *opt)
{
	opt->missed_after_ns = CTP_NS_PER_SEC;
	opt->never_yielded_after_ns = CTP_NS_PER_SEC;
}

/* The analysis keeps its own copy of the strings it shows after reading (the decoder's go with
 * the decoder). */
static const char *own(struct ctp_analysis *a, const char *s, bool *oom)
{
	if (!s)
		return NULL;
	const char *kept = ctp_strings_intern(&a->strings, s, strlen(s));
	if (!kept)
		*oom = true;
	return kept;
}

/* An operation as the contract's static word: the model keeps no copy per event. */
static const char *op_word(uint32_t op, const char *name)
{
	const char *word = ctp_name_of(&ctp_op_names, op);
	return word ? word : name ? "other" : NULL;
}

static void see_ts(struct ctp_analysis *a, struct an_process *p, uint64_t ts)
{
	if (!ts)
		return;
	if (!a->sum.first_ts || ts < a->sum.first_ts)
		a->sum.first_ts = ts;
	if (ts > a->sum.last_ts)
		a->sum.last_ts = ts;
	if (p) {
		if (!p->pub.first_ts || ts < p->pub.first_ts)
			p->pub.first_ts = ts;
		if (ts > p->pub.last_ts)
			p->pub.last_ts = ts;
	}
}

/* ---- processes, coroutines, stacks ---- */

static struct an_process *new_process(struct ctp_analysis *a, uint32_t pid)
{
	if (CTP_GROW(a->procs, a->cap_procs, a->nprocs + 1) < 0)
		return NULL;
	size_t i = a->nprocs;
	if (ctp_idmap_put(&a->latest_proc, pid, 0, (uint32_t)i) < 0)
		return NULL;
	struct an_process *p = &a->procs[i];
	memset(p, 0, sizeof(*p));
	p->pub.index = i;
	p->pub.pid = pid;
	a->nprocs++;
	a->sum.processes++;
	return p;
}

/* The latest record of the event's pid, made when an event names a pid before its `process`
 * line. */
static struct an_process *process_of(struct ctp_analysis *a, uint32_t pid)
{
	uint32_t i = ctp_idmap_get(&a->latest_proc, pid, 0);
	return i != CTP_IDMAP_NONE ? &a->procs[i] : new_process(a, pid);
}

/* The coroutine's index in coros, CTP_IDMAP_NONE when unknown. */
static uint32_t coro_lookup(const struct ctp_analysis *a, const struct an_process *p, uint64_t id)
{
	return ctp_idmap_get(&a->coro_index, p->pub.index, id);
}

static struct an_coro *find_coro(struct ctp_analysis *a, struct an_process *p, uint64_t id)
{
	uint32_t i = coro_lookup(a, p, id);
	return i != CTP_IDMAP_NONE ? &a->coros[i] : NULL;
}

static const struct an_side no_side = {
	.wait_fd = -1, .closed_fd = -1, .ready_fd = -1, .late_fd = -1};

const struct an_side *ctp_an_side(const struct ctp_analysis *a, const struct an_coro *c)
{
	return c->side ? &a->sides[c->side - 1] : &no_side;
}

/* The coroutine's fd record to write, made on first use. NULL when out of memory. The pointer
 * is good until the next call (the records may move). */
static struct an_side *side(struct ctp_analysis *a, struct an_coro *c)
{
	if (!c->side) {
		if (a->nsides >= UINT32_MAX - 1 ||
		    CTP_GROW(a->sides, a->cap_sides, a->nsides + 1) < 0)
			return NULL;
		a->sides[a->nsides++] = no_side;
		c->side = (uint32_t)a->nsides;
	}
	return &a->sides[c->side - 1];
}

/* The coroutine `id` of `p`, made on first mention (a `switch` may name one whose `coro` line was
 * lost). NULL for id 0 or when out of memory. */
static struct an_coro *coro_of(struct ctp_analysis *a, struct an_process *p, uint64_t id)
{
	if (!id)
		return NULL;
	struct an_coro *c = find_coro(a, p, id);
	if (c)
		return c;
	if (CTP_GROW(a->coros, a->cap_coros, a->ncoros + 1) < 0 ||
	    ctp_idmap_put(&a->coro_index, p->pub.index, id, (uint32_t)a->ncoros) < 0)
		return NULL;
	c = &a->coros[a->ncoros];
	memset(c, 0, sizeof(*c));
	c->pub.index = a->ncoros++;
	c->pub.process = p->pub.index;
	c->pub.pid = p->pub.pid;
	c->pub.id = id;
	c->pub.wait_fd = -1;
	c->pub.wait_closed = -1;
	p->pub.coroutines++;
	a->sum.coroutines++;
	return c;
}

static int on_process(struct ctp_analysis *a, const struct ctp_event *ev)
{
	uint32_t i = ctp_idmap_get(&a->latest_proc, ev->pid, 0);
	struct an_process *p = NULL;
	if (i != CTP_IDMAP_NONE) {
		p = &a->procs[i];
		/* A second hello from the same pid is an exec: a new program, a new record. */
		if (p->seen_process_line || p->pub.coroutines) {
			p->exec_replaced = true;
			p = NULL;
		}
	}
	if (!p && !(p = new_process(a, ev->pid)))
		return -1;
	p->seen_process_line = true;
	p->pub.ppid = ev->process.ppid;
	bool oom = false;
	p->pub.exe = own(a, ev->process.exe, &oom);
	size_t n = ev->process.argc;
	p->argv = calloc(n + 1, sizeof(*p->argv));
	if (oom || !p->argv)
		return -1;
	for (size_t k = 0; k < n; k++) {
		const char *s = ev->process.argv[k];
		if (!(p->argv[p->pub.argc] = strdup(s ? s : "")))
			return -1;
		p->pub.argc++;
	}
	p->pub.argv = (const char *const *)p->argv;
	return 0;
}

static int on_coro(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	struct an_coro *c = coro_of(a, p, ev->coro);
	if (!c)
		return ev->coro ? -1 : 0;
	struct ctp_analysis_coro *pc = &c->pub;
	bool oom = false;
	pc->kind = own(a, ev->coro_line.kind_name, &oom);
	pc->entry = own(a, ev->coro_line.entry, &oom);
	if (oom)
		return -1;
	if (ev->coro_line.kind == CTP_KIND_THREAD)
		a->sum.threads++;
	pc->entry_addr = ev->coro_line.entry_addr;
	pc->parent = ev->coro_line.parent;
	pc->tid = ev->tid;
	pc->created_ts = ev->ts;
	pc->create_stack = ev->stack;
	see_ts(a, p, pc->created_ts);
	return 0;
}

/* The run the switch closed on its thread (the one run tracker, cat/model/runs.h): the longest
 * one of each coroutine is what never_yielded reports. */
static int track_run(struct ctp_analysis *a, struct an_coro *from, const struct ctp_event *ev)
{
	struct ctp_run_step step;
	if (ctp_runs_switch(&a->runs, ev, 0, 0, &step) < 0)
		return -1;
	const struct ctp_run *run = &step.ended;
	if (!from || !run->open || run->coro != ev->sw.from || ev->ts < run->start)
		return 0;
	struct ctp_analysis_coro *f = &from->pub;
	uint64_t length = ev->ts - run->start;
	if (length > f->longest_run_ns) {
		f->longest_run_ns = length;
		/* When and where it ran is only ever shown for a run over the threshold. */
		if (length > a->opt.never_yielded_after_ns) {
			struct an_side *sd = side(a, from);
			if (!sd)
				return -1;
			sd->longest_run_start = run->start;
			sd->longest_run_tid = ev->tid;
			sd->longest_run_stack = ev->stack;
		}
	}
	return 0;
}

/* An event of a process after its snapshot (a live trace: the collector wrote one on SIGUSR1,
 * and the process ran on). The snapshot's word on the coroutine `c` is overtaken by what
 * happened to it since: its state is the events' again. The process is no longer seen exactly
 * up to its last line: its findings become uncertain, as without a snapshot. Events that are
 * not later than the snapshot change nothing: its states already include them. */
static void after_snapshot(struct an_process *p, struct an_coro *c, uint64_t ts)
{
	if (p->pub.exit != CTP_ANALYSIS_EXIT_SNAPSHOT || ts <= p->pub.snapshot_ts)
		return;
	p->moved_on = true;
	if (!c)
		return;
	c->pub.state = CTP_ANALYSIS_STATE_UNKNOWN;
	c->pub.state_stack = 0;
	c->pub.state_since = 0;
	c->pub.wait_fd = -1;
	c->pub.wait_op = NULL;
	c->pub.wait_closed = -1;
}

static int on_switch(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	uint64_t ts = ev->ts;
	a->sum.switches++;
	p->pub.switches++;
	see_ts(a, p, ts);

	/* Both may be new (their coro lines lost): room for two first, so that making `to` does not
	 * move the records from `from` points into. */
	if (CTP_GROW(a->coros, a->cap_coros, a->ncoros + 2) < 0)
		return -1;
	struct an_coro *from = coro_of(a, p, ev->sw.from);
	struct an_coro *to = coro_of(a, p, ev->sw.to);
	if ((ev->sw.from && !from) || (ev->sw.to && !to))
		return -1;
	after_snapshot(p, from, ts);
	after_snapshot(p, to, ts);
	if (track_run(a, from, ev) < 0)
		return -1;
	if (from) {
		struct ctp_analysis_coro *f = &from->pub;
		/* A coroutine's own switches are read in their order but for an M:N scheduler's
		 * thread hops, which the collector orders within its harvest pass. */
		uint32_t to_ref = to ? to->pub.index + 1 : 0;
		if (!f->last_suspend_ts) {
			from->first_suspend_stack = ev->stack;
			from->first_suspend_to = to_ref;
		}
		if (ts >= f->last_suspend_ts) {
			f->last_suspend_ts = ts;
			f->last_suspend_stack = ev->stack;
			from->last_suspend_to = to_ref;
		}
	}
	if (to) {
		struct ctp_analysis_coro *t = &to->pub;
		t->resumes++;
		if (ts >= t->last_resume_ts) {
			t->last_resume_ts = ts;
			t->last_tid = ev->tid;
		}
		struct an_side *ft = to->side ? side(a, to) : NULL;
		if (ft && ft->ready_ts && ts >= ft->ready_ts) {
			uint64_t late = ts - ft->ready_ts;
			if (late > a->opt.missed_after_ns && late > ft->late_ns) {
				ft->late_ns = late;
				ft->late_fd = ft->ready_fd;
				ft->late_op = ft->ready_op;
				ft->late_ready_ts = ft->ready_ts;
				ft->late_stack = t->last_suspend_stack;
			}
			ft->ready_ts = 0;
		}
	}
	return 0;
}

/* The one coroutine lifecycle: a coroutine ends at its coro_end event (written by the
 * collector, or derived by the decoder for a format 1 trace), and nowhere else. */
static int on_coro_end(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	struct an_coro *c = coro_of(a, p, ev->coro);
	if (!c)
		return ev->coro ? -1 : 0;
	after_snapshot(p, c, ev->ts);
	c->pub.ended = true;
	c->pub.ended_ts = ev->ts;
	c->pub.end_how = ev->coro_end.how;
	see_ts(a, p, ev->ts);
	return 0;
}

static int on_stack(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	uint32_t id = ev->stack_line.id;
	if (!id || ctp_idmap_get(&a->stack_index, p->pub.index, id) != CTP_IDMAP_NONE)
		return 0;
	size_t n = ev->stack_line.nframes;
	struct ctp_analysis_frame *fr = calloc(n ? n : 1, sizeof(*fr));
	if (!fr || CTP_GROW(a->stacks, a->cap_stacks, a->nstacks + 1) < 0 ||
	    ctp_idmap_put(&a->stack_index, p->pub.index, id, (uint32_t)a->nstacks) < 0) {
		free(fr);
		return -1;
	}
	bool oom = false;
	for (size_t i = 0; i < n; i++) {
		const struct ctp_event_frame *f = &ev->stack_line.frames[i];
		fr[i].addr = f->addr;
		fr[i].off = f->off;
		fr[i].line = f->line;
		fr[i].has_module_off = f->has_module_off;
		fr[i].module_off = f->module_off;
		fr[i].sym = own(a, f->sym, &oom);
		fr[i].module = own(a, f->module, &oom);
		fr[i].file = own(a, f->file, &oom);
	}
	if (oom) {
		free(fr);
		return -1;
	}
	a->stacks[a->nstacks++] = (struct ctp_analysis_stack){
		.pid = p->pub.pid,
		.id = id,
		.nframes = n,
		.frames = fr,
		.reaches_start = ev->stack_line.reaches_start,
	};
	a->sum.stacks++;
	return 0;
}

static int on_state(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	struct an_coro *c = coro_of(a, p, ev->coro);
	if (!c)
		return ev->coro ? -1 : 0;
	struct ctp_analysis_coro *pc = &c->pub;
	p->pub.has_states = true;
	/* enum ctp_analysis_state keeps the values of the contract's enum ctp_coro_state. */
	pc->state = (enum ctp_analysis_state)ev->state.state;
	pc->state_tid = ev->tid;
	pc->state_since = ev->state.since;
	pc->state_stack = ev->stack;
	pc->state_switches = ev->state.switches;
	if (ev->state.wait_fd >= 0) {
		pc->wait_fd = ev->state.wait_fd;
		pc->wait_op = op_word(ev->state.wait_op, ev->state.wait_op_name);
		pc->wait_closed = ev->state.wait_closed;
	}
	see_ts(a, p, pc->state_since);
	return 0;
}

/* A live snapshot: the process ran on, but every coroutine's state at ev->ts follows. Stands
 * for the process's end in the analysis unless a real exit comes. */
static void on_snapshot(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	if (p->pub.exit != CTP_ANALYSIS_EXIT_NONE && p->pub.exit != CTP_ANALYSIS_EXIT_SNAPSHOT)
		return;
	p->pub.exit = CTP_ANALYSIS_EXIT_SNAPSHOT;
	p->pub.snapshot_ts = ev->ts;
	p->moved_on = false;
	p->exit_ts = ev->ts;
	see_ts(a, p, ev->ts);
}

static void on_exit_line(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	struct ctp_analysis_process *pp = &p->pub;
	switch (ev->exit.kind) {
	case CTP_EXIT_LINE_SIGNAL:
		pp->exit = CTP_ANALYSIS_EXIT_SIGNAL;
		pp->crash_tid = ev->tid;
		pp->crash_coro = ev->coro;
		pp->crash_addr = ev->exit.addr;
		pp->crash_stack = ev->stack;
		a->sum.crashed++;
		break;
	case CTP_EXIT_LINE_STATUS:
		pp->exit = CTP_ANALYSIS_EXIT_STATUS;
		break;
	case CTP_EXIT_LINE_UNKNOWN:
		pp->exit = CTP_ANALYSIS_EXIT_UNKNOWN;
		break;
	}
	pp->exit_value = ev->exit.value;
	p->exit_ts = ev->ts;
	see_ts(a, p, p->exit_ts);
	a->sum.processes_ended++;
	ctp_runs_end_process(&a->runs, ev->pid, NULL, NULL);
}

/* ---- fd events ---- */

static struct an_fd_waiter *fd_waiter(struct ctp_analysis *a, struct an_process *p, int fd,
				      bool make)
{
	uint32_t i = ctp_idmap_get(&a->fd_index, p->pub.index, (uint64_t)fd);
	if (i != CTP_IDMAP_NONE)
		return &a->fd_waiters[i];
	if (!make || CTP_GROW(a->fd_waiters, a->cap_fd_waiters, a->nfd_waiters + 1) < 0 ||
	    ctp_idmap_put(&a->fd_index, p->pub.index, (uint64_t)fd, (uint32_t)a->nfd_waiters) < 0)
		return NULL;
	struct an_fd_waiter *w = &a->fd_waiters[a->nfd_waiters++];
	*w = (struct an_fd_waiter){0};
	return w;
}

/* The coroutine an fd event is about: its `waiter`, else the last one that got EAGAIN on the fd
 * and has not been resumed since (so still parked on it). */
static struct an_coro *waiter_of(struct ctp_analysis *a, struct an_process *p,
				 const struct ctp_event *ev)
{
	if (ev->fd.waiter)
		return coro_of(a, p, ev->fd.waiter);
	struct an_fd_waiter *w = fd_waiter(a, p, ev->fd.fd, false);
	if (!w || !w->coro)
		return NULL;
	struct an_coro *c = find_coro(a, p, w->coro);
	if (!c)
		return NULL;
	const struct an_side *ft = ctp_an_side(a, c);
	return ft->wait_fd == ev->fd.fd && ft->wait_ts >= c->pub.last_resume_ts ? c : NULL;
}

static int on_would_block(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	int fd = ev->fd.fd;
	uint64_t ts = ev->ts;
	struct an_coro *c = coro_of(a, p, ev->coro);
	if (!c)
		return ev->coro ? -1 : 0;
	struct an_side *ft = side(a, c);
	if (!ft)
		return -1;
	if (ts >= ft->wait_ts) {
		ft->wait_fd = fd;
		ft->wait_op = op_word(ev->fd.op, ev->fd.op_name);
		ft->wait_ts = ts;
		ft->wait_stack = ev->stack;
		/* A close or readiness from before this wait belongs to an earlier one. */
		if (ft->close_ts && ft->close_ts < ts)
			ft->close_ts = 0;
		if (ft->ready_ts && ft->ready_ts < ts)
			ft->ready_ts = 0;
	}
	struct an_fd_waiter *w = fd_waiter(a, p, fd, true);
	if (!w)
		return -1;
	if (ts >= w->ts) {
		w->coro = ev->coro;
		w->ts = ts;
	}
	return 0;
}

static int on_close(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	int fd = ev->fd.fd;
	uint64_t ts = ev->ts;
	struct an_coro *c = waiter_of(a, p, ev);
	if (!c && ev->fd.waiter)
		return -1;
	/* The first close after the wait began is the one that stranded it. */
	const struct an_side *seen = c ? ctp_an_side(a, c) : NULL;
	if (seen && (!seen->wait_ts || ts >= seen->wait_ts) &&
	    (!seen->close_ts || ts < seen->close_ts)) {
		struct an_side *ft = side(a, c);
		if (!ft)
			return -1;
		ft->closed_fd = fd;
		ft->close_ts = ts;
		ft->close_coro = ev->coro;
		ft->close_tid = ev->tid;
		ft->close_stack = ev->stack;
		if (ft->wait_fd < 0) {
			/* Its would_block was not seen: the close's word is all there is. */
			ft->wait_fd = fd;
			ft->wait_op = op_word(ev->fd.op, ev->fd.op_name);
		}
	}
	/* The number may be reused by the next open: forget who waited on this one (the slot
	 * stays, so memory follows the highest fd numbers, not the number of opens). */
	struct an_fd_waiter *w = fd_waiter(a, p, fd, false);
	if (w)
		*w = (struct an_fd_waiter){0};
	return 0;
}

static int on_ready(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	int fd = ev->fd.fd;
	uint64_t ts = ev->ts;
	struct an_coro *c = waiter_of(a, p, ev);
	if (!c)
		return ev->fd.waiter ? -1 : 0;
	/* Only a coroutine parked on this fd is owed a resume; readiness of an fd its owner is
	 * busy reading needs none. A named waiter is one the tracer saw waiting (also through a
	 * level-triggered register, which has no EAGAIN); else its EAGAIN on the fd must have
	 * come after its latest resume. */
	bool named = ev->fd.waiter != 0;
	const struct an_side *seen = ctp_an_side(a, c);
	if (c->pub.last_resume_ts > ts || (!named && (seen->wait_fd != fd || !seen->wait_ts ||
						      seen->wait_ts < c->pub.last_resume_ts)))
		return 0;
	if (!seen->ready_ts || ts < seen->ready_ts) {
		struct an_side *ft = side(a, c);
		if (!ft)
			return -1;
		ft->ready_ts = ts;
		ft->ready_fd = fd;
		ft->ready_op = ft->wait_fd == fd ? ft->wait_op : op_word(ev->fd.op, ev->fd.op_name);
	}
	return 0;
}

static int on_fd(struct ctp_analysis *a, struct an_process *p, const struct ctp_event *ev)
{
	a->sum.fd_events++;
	p->pub.fd_events++;
	see_ts(a, p, ev->ts);
	after_snapshot(p, NULL, ev->ts);
	if (ev->fd.fd < 0)
		return 0;
	switch (ev->fd.event) {
	case CTP_FD_WOULD_BLOCK:
		return on_would_block(a, p, ev);
	case CTP_FD_CLOSE:
		return on_close(a, p, ev);
	case CTP_FD_READY:
		return on_ready(a, p, ev);
	}
	return 0; /* register, unregister: not needed by any finding */
}

/* ---- the public calls ---- */

struct ctp_analysis *ctp_analysis_new(const struct ctp_analysis_options *opt)
{
	struct ctp_analysis *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	if (opt)
		a->opt = *opt;
	else
		ctp_analysis_options_default(&a->opt);
	a->sum.missed_after_ns = a->opt.missed_after_ns;
	a->sum.never_yielded_after_ns = a->opt.never_yielded_after_ns;
	a->sum.complete = true;
	return a;
}

int ctp_analysis_add_event(struct ctp_analysis *a, const struct ctp_event *ev)
{
	/* A derived event (a format 1 coroutine end) is no line of the trace. */
	if (ev->line)
		a->sum.lines++;
	switch (ev->type) {
	case CTP_EV_PROCESS:
		return ev->pid ? on_process(a, ev) : 0;
	case CTP_EV_END:
		a->sum.has_end = true;
		a->end_ts = ev->ts;
		see_ts(a, NULL, a->end_ts);
		return 0;
	case CTP_EV_TRACE:
	case CTP_EV_UNKNOWN:
		return 0;
	default:
		break;
	}
	if (!ev->pid)
		return 0; /* a line of no process: nothing to learn */
	struct an_process *p = process_of(a, ev->pid);
	if (!p)
		return -1;
	switch (ev->type) {
	case CTP_EV_SWITCH:
		return on_switch(a, p, ev);
	case CTP_EV_FD:
		return on_fd(a, p, ev);
	case CTP_EV_CORO:
		return on_coro(a, p, ev);
	case CTP_EV_CORO_END:
		return on_coro_end(a, p, ev);
	case CTP_EV_STACK:
		return on_stack(a, p, ev);
	case CTP_EV_STATE:
		return on_state(a, p, ev);
	case CTP_EV_LOSS:
		a->sum.lost += ev->loss.count;
		p->pub.lost += ev->loss.count;
		return 0;
	case CTP_EV_EXIT:
		on_exit_line(a, p, ev);
		return 0;
	case CTP_EV_SNAPSHOT:
		on_snapshot(a, p, ev);
		return 0;
	default:
		return 0;
	}
}

bool ctp_an_seen_to_end(const struct ctp_analysis *a, const struct an_process *p)
{
	/* A snapshot that nothing followed is exact even in a trace still being written: what
	 * the cut hides came after it. */
	if (p->pub.exit == CTP_ANALYSIS_EXIT_SNAPSHOT)
		return !p->moved_on;
	if (p->pub.exit == CTP_ANALYSIS_EXIT_NONE && !p->exec_replaced)
		return false;
	return a->sum.complete;
}

uint64_t ctp_an_process_end(const struct ctp_analysis *a, const struct an_process *p)
{
	uint64_t end = p->pub.last_ts;
	if (p->exit_ts > end)
		end = p->exit_ts;
	/* Still running when the trace ended: it ran at least until then. */
	if (p->pub.exit == CTP_ANALYSIS_EXIT_NONE && !p->exec_replaced && a->end_ts > end)
		end = a->end_ts;
	return end;
}

void ctp_an_take_end(struct ctp_analysis *a, const struct ctp_trace_end *end, bool live)
{
	if (end) {
		a->sum.missing_lines = ctp_trace_end_missing(end) + ctp_trace_end_uncounted(end);
		a->sum.complete = end->kind == CTP_TRACE_COMPLETE && a->sum.missing_lines == 0;
		a->sum.bad_lines = end->bad_lines;
		a->sum.lines = end->lines;
	} else {
		/* Read to its end line (whole), or still being written (live). */
		a->sum.complete = !live;
	}
	a->sum.live = live;
	bool uncertain = a->sum.lost > 0 || (a->nprocs == 0 && !a->sum.complete);
	for (size_t i = 0; i < a->nprocs; i++)
		if (!ctp_an_seen_to_end(a, &a->procs[i]))
			uncertain = true;
	a->sum.uncertain = uncertain;
}

void ctp_analysis_free(struct ctp_analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nprocs; i++) {
		struct an_process *p = &a->procs[i];
		for (size_t k = 0; k < p->pub.argc; k++)
			free(p->argv[k]);
		free(p->argv);
	}
	for (size_t i = 0; i < a->nstacks; i++)
		free((void *)a->stacks[i].frames);
	for (size_t i = 0; i < a->nfindings; i++) {
		free((void *)a->findings[i].coros);
		free((void *)a->findings[i].fds);
	}
	free(a->findings);
	free(a->stacks);
	free(a->coros);
	free(a->sides);
	free(a->procs);
	free(a->fd_waiters);
	ctp_idmap_free(&a->latest_proc);
	ctp_idmap_free(&a->coro_index);
	ctp_idmap_free(&a->stack_index);
	ctp_idmap_free(&a->fd_index);
	ctp_runs_free(&a->runs);
	ctp_strings_free(&a->strings);
	free(a);
}

const struct ctp_analysis_summary *ctp_analysis_summary(const struct ctp_analysis *a)
{
	return &a->sum;
}

size_t ctp_analysis_process_count(const struct ctp_analysis *a)
{
	return a->nprocs;
}

const struct ctp_analysis_process *ctp_analysis_process_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->nprocs ? &a->procs[i].pub : NULL;
}

const struct ctp_analysis_process *ctp_analysis_process_find(const struct ctp_analysis *a,
							     uint32_t pid)
{
	uint32_t i = ctp_idmap_get(&a->latest_proc, pid, 0);
	return i != CTP_IDMAP_NONE ? &a->procs[i].pub : NULL;
}

const char *ctp_analysis_state_name(enum ctp_analysis_state s)
{
	const char *name = ctp_name_of(&ctp_state_names, s);
	return name ? name : "unknown";
}

size_t ctp_analysis_coro_count(const struct ctp_analysis *a)
{
	return a->ncoros;
}

const struct ctp_analysis_coro *ctp_analysis_coro_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->ncoros ? &a->coros[i].pub : NULL;
}

const struct ctp_analysis_coro *ctp_analysis_coro_find(const struct ctp_analysis *a, uint32_t pid,
						       uint64_t coro)
{
	/* Coroutine ids stay unique within a pid across exec: look through its records, newest
	 * first. */
	for (size_t i = a->nprocs; i-- > 0;) {
		if (a->procs[i].pub.pid != pid)
			continue;
		uint32_t k = coro_lookup(a, &a->procs[i], coro);
		if (k != CTP_IDMAP_NONE)
			return &a->coros[k].pub;
	}
	return NULL;
}

const struct ctp_analysis_coro *ctp_analysis_coro_in(const struct ctp_analysis *a, size_t process,
						     uint64_t coro)
{
	uint32_t k =
		process < a->nprocs ? coro_lookup(a, &a->procs[process], coro) : CTP_IDMAP_NONE;
	return k != CTP_IDMAP_NONE ? &a->coros[k].pub : NULL;
}

const struct ctp_analysis_stack *ctp_analysis_stack_in(const struct ctp_analysis *a, size_t process,
						       uint32_t id)
{
	uint32_t k = id ? ctp_idmap_get(&a->stack_index, process, id) : CTP_IDMAP_NONE;
	return k != CTP_IDMAP_NONE ? &a->stacks[k] : NULL;
}

const struct ctp_analysis_stack *ctp_analysis_stack_find(const struct ctp_analysis *a, uint32_t pid,
							 uint32_t id)
{
	const struct ctp_analysis_process *p = ctp_analysis_process_find(a, pid);
	return p ? ctp_analysis_stack_in(a, p->index, id) : NULL;
}

size_t ctp_analysis_finding_count(const struct ctp_analysis *a)
{
	return a->nfindings;
}

const struct ctp_finding *ctp_analysis_finding_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->nfindings ? &a->findings[i] : NULL;
}

size_t ctp_analysis_failure_count(const struct ctp_analysis *a)
{
	return a->failures;
}

_Static_assert((int)CTP_ANALYSIS_STATE_CREATED == (int)CTP_STATE_CREATED &&
		       (int)CTP_ANALYSIS_STATE_RUNNING == (int)CTP_STATE_RUNNING &&
		       (int)CTP_ANALYSIS_STATE_SUSPENDED == (int)CTP_STATE_SUSPENDED &&
		       (int)CTP_ANALYSIS_STATE_EXITED == (int)CTP_STATE_EXITED,
	       "analysis states are the contract's");

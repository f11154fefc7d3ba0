/* The snapshot as a trace (docs/trace-format.md): a trace header, the process, its stacks and
 * coroutines, a `snapshot` line, one `state` line per coroutine, and the `end` line. So every
 * view of ctp-cat reads a live process as it reads a run, and `ctp-cat --report` analyses it
 * with states that are exact at the snapshot (`ctp-pstack --report`). */
#include "ctp/emit.h"
#include "pstack/procinfo.h"
#include "ctp/names.h"
#include "pstack/view.h"

static void put_stacks(struct pstack_view *v, struct ctp_emitter *e)
{
	const struct pstack_snapshot *s = v->snap;
	const struct ctp_sym *syms[CTP_MAX_STACK_DEPTH];
	for (uint32_t id = 1; id <= s->nstack_refs; id++) {
		uint32_t n;
		bool reaches_start;
		const uint64_t *pcs = pstack_stack_frames(s, id, &n, &reaches_start);
		/* The entries of one stack are kept together: no growth of the cache between. */
		ctp_symcache_reserve(v->syms, n);
		for (uint32_t i = 0; i < n; i++)
			syms[i] = pstack_symbol(v, pcs[i], true);
		ctp_emit_stack(e, s->pid, id, reaches_start, pcs, syms, n);
	}
}

static void put_coro(struct pstack_view *v, struct ctp_emitter *e, const struct pstack_coro *c)
{
	const struct pstack_snapshot *s = v->snap;
	struct ctp_coro_line l = {
		.pid = s->pid,
		.coro = c->coro,
		.kind = c->kind,
		.entry = c->entry ? pstack_symbol(v, c->entry, false)->sym : NULL,
		.entry_addr = c->entry,
		.tid = c->tid,
		.has_ts = s->ns_per_tick > 0 && c->created_raw != 0,
		.ts = pstack_mono_ns(s, c->created_raw),
	};
	ctp_emit_coro(e, &l);
}

static void put_state(struct pstack_view *v, struct ctp_emitter *e, const struct pstack_coro *c)
{
	const struct pstack_snapshot *s = v->snap;
	uint64_t since = pstack_mono_ns(s, c->since_raw);
	uint32_t state = c->state;
	if (state == CTP_STATE_LEFT) {
		/* The trace has no "left": as the collector does at a process's end, a coroutine
		 * that left by setcontext waits (it left to wait on an fd) or has ended. */
		state = c->wait_fd >= 0 ? CTP_STATE_SUSPENDED : CTP_STATE_EXITED;
		if (state == CTP_STATE_EXITED) {
			struct ctp_coro_end_line end = {
				.pid = s->pid,
				.coro = c->coro,
				.tid = c->tid,
				.has_ts = s->ns_per_tick > 0,
				.ts = since,
				.how = CTP_END_LEFT,
			};
			ctp_emit_coro_end(e, &end);
		}
	}
	struct ctp_state_line l = {
		.pid = s->pid,
		.coro = c->coro,
		.state = state,
		.tid = c->tid,
		.has_since = s->ns_per_tick > 0,
		.since = since,
		.stack = state == CTP_STATE_SUSPENDED ? c->stack : 0,
		.switches = c->switches,
		.wait_fd = -1,
	};
	if (c->wait_fd >= 0 && state != CTP_STATE_EXITED) {
		/* The state line takes the station's packed form (op, closed bit, epoch). */
		l.wait_fd = c->wait_fd;
		l.wait_op = ctp_wait_pack(c->wait_op, c->switches) |
			    (c->wait_closed ? CTP_WAIT_CLOSED : 0);
	}
	ctp_emit_state(e, &l);
}

/* A core made by a signal: the process died of it, as an `exit` line says, with the coroutine
 * that ran on the thread that took it and that coroutine's stack from the thread's registers.
 * (A core made by gcore has no signal: its process ran on, and the snapshot says so.) */
static void put_core_signal(struct pstack_view *v, struct ctp_emitter *e)
{
	const struct pstack_snapshot *s = v->snap;
	struct ctp_exit_line l = {.pid = s->pid,
				  .how = CTP_EXITED_SIGNAL,
				  .value = v->core->signal,
				  .tid = v->core->signal_tid};
	for (size_t i = 0; i < s->ncoros; i++) {
		const struct pstack_coro *c = &s->coros[i];
		if (c->state != CTP_STATE_RUNNING || c->tid != v->core->signal_tid)
			continue;
		l.coro = c->coro;
		l.stack = c->stack;
		/* A thread runs one coroutine; its own station is running too while it runs
		 * none: the coroutine, if there is one, is what crashed. */
		if (c->kind != CTP_KIND_THREAD)
			break;
	}
	ctp_emit_exit(e, &l);
}

void pstack_write_trace(struct pstack_view *v, const struct pstack_procinfo *pi,
			struct ctp_zwriter *z)
{
	const struct pstack_snapshot *s = v->snap;
	struct ctp_emitter e;
	ctp_emit_init(&e, z);
	ctp_emit_trace(&e, s->start_mono_ns);
	ctp_emit_process(&e, s->pid, pi->ppid, pi->strings, pi->len, pi->argc, (int)s->stack_depth);
	put_stacks(v, &e);
	for (size_t i = 0; i < s->ncoros; i++)
		put_coro(v, &e, &s->coros[i]);
	ctp_emit_snapshot(&e, s->pid, s->now_mono_ns);
	for (size_t i = 0; i < s->ncoros; i++)
		put_state(v, &e, &s->coros[i]);
	if (v->core && v->core->signal)
		put_core_signal(v, &e);
	ctp_emit_end(&e);
}

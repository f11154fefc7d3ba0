/* The end of a process: the final state of every coroutine it ever had, and how it ended as
 * far as its own segment tells. */
#include <string.h>

#include "collector/proc.h"
#include "collector/records.h"
#include "ctp/atomics.h"
#include "ctp/names.h"
#include "ctp/unfinished_switch.h"

static void note_station(struct ctp_proc *p, uint32_t idx, const struct ctp_station_snapshot *s,
			 void *ctx)
{
	(void)p;
	ctp_unfinished_note(ctx, idx, s);
}

static void state_from_station(struct ctp_proc *p, uint32_t idx,
			       const struct ctp_station_snapshot *s, void *ctx)
{
	if (ctp_ended_coros_has(&p->ended, s->coro))
		return; /* ended, its station not yet reused: its line comes from the log */
	bool is_new;
	struct ctp_coro *c = ctp_coro_get(&p->coros, s->coro, &is_new);
	if (c->flags & CTP_CORO_FINAL)
		return; /* two stations claim one id: garbage; the first wins */
	ctp_proc_announce_station(p, c, s);
	c->flags |= CTP_CORO_FINAL;
	uint32_t state = s->state;
	struct ctp_station_snapshot ran;
	uint32_t ran_on;
	if (ctp_unfinished_was_running(ctx, idx, s, &ran_on)) {
		/* Its thread was stopped in the switch that left it, or in the end before its
		 * resume: it ran there. */
		ran = *s;
		ran.tid = ran_on;
		s = &ran;
		state = CTP_STATE_RUNNING;
	}
	uint64_t last = ctp_proc_ts(p, s->last_switch ? s->last_switch : s->created);
	if (state == CTP_STATE_LEFT) {
		/* Nothing came back to it: a coroutine that left by setcontext ended there, unless
		 * it waits on an fd (a scheduler that suspends with setcontext). Only now, at the
		 * end, can that be known: its coro_end comes here, with the time it left. */
		state = ctp_wait_current(s->wait_fd, s->wait_op, s->switches) ? CTP_STATE_SUSPENDED
									      : CTP_STATE_EXITED;
		if (state == CTP_STATE_EXITED)
			ctp_proc_coro_end(p, c, CTP_END_LEFT, 0, s->tid, last);
	}
	if (state == CTP_STATE_EXITED) /* its EXIT record was lost: ended, how is unknown */
		ctp_proc_coro_end(p, c, CTP_END_UNKNOWN, 0, s->tid, last);
	/* The process is gone: its stacks come from the switches and its own walks at its end. */
	struct ctp_state_line l = ctp_proc_state_line(p, idx, s, state, NULL);
	if (state == CTP_STATE_RUNNING && p->nrunning < CTP_PROC_MAX_RUNNING)
		p->running[p->nrunning++] = s->coro;
	ctp_emit_state(&p->c->em, &l);
}

/* The state line of a coroutine that ended, known from its events alone. */
static void write_exited(struct ctp_proc *p, uint64_t id, uint64_t since, uint32_t tid,
			 uint32_t switches)
{
	struct ctp_state_line l = {
		.pid = p->pid,
		.coro = id,
		.state = CTP_STATE_EXITED,
		.tid = tid,
		.has_since = since != 0,
		.since = since,
		.switches = switches,
		.wait_fd = -1,
	};
	ctp_emit_state(&p->c->em, &l);
}

static void write_retired(const struct ctp_ended_coro *e, void *ctx)
{
	write_exited(ctx, e->id, e->since, e->tid, e->switches);
}

void ctp_proc_write_states(struct ctp_proc *p)
{
	p->nrunning = 0;
	/* Stations first: they are exact even where ring events were dropped. A first pass finds
	 * the switches its threads were stopped in (ctp/unfinished_switch.h). */
	struct ctp_unfinished_switches unfinished;
	ctp_unfinished_init(&unfinished);
	ctp_proc_each_station(p, note_station, &unfinished);
	ctp_unfinished_settle(&unfinished);
	ctp_proc_each_station(p, state_from_station, &unfinished);
	ctp_unfinished_free(&unfinished);
	/* Every other coroutine has ended: a station is recycled only after its coroutine
	 * exited, and a coroutine that never had one was never traced. */
	for (size_t i = 0; i < p->coros.cap; i++) {
		struct ctp_coro *c = &p->coros.slots[i];
		if (!c->id || (c->flags & CTP_CORO_FINAL))
			continue;
		c->flags |= CTP_CORO_FINAL;
		/* Its station was recycled, so it ended; without its EXIT record, how is not known.
		 */
		ctp_proc_coro_end(p, c, CTP_END_UNKNOWN, 0, c->tid, c->since);
		write_exited(p, c->id, c->since, c->tid, c->switches);
	}
	/* And those that ended and left the table, their coro_end written long ago. */
	ctp_ended_coros_each(&p->ended, write_retired, p);
}

bool ctp_proc_header_exit(struct ctp_proc *p, struct ctp_exit_line *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = p->pid;
	if (!p->view.base)
		return false;
	const struct ctp_header *h = (const struct ctp_header *)p->view.base;
	/* Acquire pairs with the release of exit_kind: the fields written before it are set. */
	uint32_t kind = CTP_LOAD_ACQUIRE(&h->exit_kind);
	if (kind != CTP_EXIT_NONE && h->exit_ts)
		out->ts = ctp_proc_ts(p, h->exit_ts);
	if (kind == CTP_EXIT_STATUS) {
		out->how = CTP_EXITED_STATUS;
		out->value = h->exit_value;
		return true;
	}
	if (kind == CTP_EXIT_SIGNAL) {
		out->how = CTP_EXITED_SIGNAL;
		out->value = h->exit_value;
		out->tid = h->crash_tid;
		out->coro = h->crash_coro;
		out->addr = h->crash_addr;
		return true;
	}
	return false;
}

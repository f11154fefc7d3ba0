/* A snapshot of a running process in the trace (SIGUSR1 to the collector): a `snapshot` line,
 * then one `state` line per live coroutine, read from the stations as the final states are, so
 * that ctp-cat --report on a trace still being written is exact up to that moment
 * (docs/trace-format.md, `snapshot`). Unlike the final states, nothing is decided for good: no
 * coroutine is marked final and no end is written; a coroutine that ended, or left by
 * setcontext without waiting on an fd (ended or not, only its process's end can tell), is left
 * to the events.
 *
 * The states are gathered first and written after the `snapshot` line, which counts them: a
 * reader of the live trace then knows when it has the whole snapshot, even when the lines span
 * frames (ctp-cat --follow --report). The `coro` and `stack` lines the states refer to go out
 * while gathering, before the snapshot line. */
#include <stdlib.h>

#include "collector/proc.h"
#include "collector/records.h"
#include "ctp/clock.h"
#include "ctp/xalloc.h"

/* Suspended coroutines a snapshot unwinds (those whose last switch was not converted yet; the
 * rest have their stacks already): a few microseconds each, in the collector's main thread
 * while the rings wait, so bounded as the preload bounds its walks at a process's end. */
enum { SNAPSHOT_WALKS = 4096 };

/* The state lines of one snapshot, gathered before they are written. */
struct gathered {
	struct ctp_state_line *lines;
	size_t n, cap;
	uint32_t walks_left;
};

static void state_now(struct ctp_proc *p, uint32_t idx, const struct ctp_station_snapshot *s,
		      void *ctx)
{
	struct gathered *g = ctx;
	bool waits = ctp_wait_current(s->wait_fd, s->wait_op, s->switches);
	uint32_t state = s->state;
	if (state == CTP_STATE_EXITED || (state == CTP_STATE_LEFT && !waits) ||
	    ctp_ended_coros_has(&p->ended, s->coro))
		return;
	if (state == CTP_STATE_LEFT)
		state = CTP_STATE_SUSPENDED; /* it left to wait on an fd */
	bool is_new;
	struct ctp_coro *c = ctp_coro_get(&p->coros, s->coro, &is_new);
	ctp_proc_announce_station(p, c, s);
	struct ctp_state_line l = ctp_proc_state_line(p, idx, s, state, &g->walks_left);
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->lines = ctp_xrealloc(g->lines, g->cap * sizeof(*g->lines));
	}
	g->lines[g->n++] = l;
}

void ctp_proc_write_snapshot(struct ctp_proc *p, uint64_t spooled_before)
{
	/* What is spooled goes out first, so that the snapshot follows the events it already
	 * includes. When the rings were just emptied, so do the records held back for ordering
	 * that are older than that: a report of the snapshot then sees, say, the closes of the
	 * fds its coroutines wait on. Otherwise records of the last moments, still held, may follow
	 * it (their times are earlier than the snapshot's, which readers take over them). */
	ctp_proc_convert(p, 0);
	if (spooled_before)
		ctp_proc_release_until(p, spooled_before);
	else
		ctp_proc_release_ordered(p);
	/* The station chunks as the segment has them now: a snapshot asked for before anything
	 * was spooled (the program made its coroutines and waits, its records still in the
	 * rings) found none, and said the process had no coroutine at all. */
	ctp_proc_follow_growth(p);
	uint64_t ts = ctp_monotonic_ns();
	struct gathered g = {.walks_left = SNAPSHOT_WALKS};
	ctp_proc_each_station(p, state_now, &g);
	ctp_emit_snapshot_counted(&p->c->em, p->pid, ts, g.n);
	for (size_t i = 0; i < g.n; i++)
		ctp_emit_state(&p->c->em, &g.lines[i]);
	free(g.lines);
}

#include "collector/deferred_stacks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collector/records.h"
#include "ctp/atomics.h"
#include "ctp/stackwalk.h"
#include "ctp/station.h"

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

/* The station chunk that holds station idx, checked against the mapping like every other
 * read of the segment. Chunks are equal in size: the one at position idx / count (in the order
 * found, or its reverse) is tried first, so that a process with many chunks costs no scan. */
static bool chunk_of(struct ctp_proc *p, uint32_t idx, struct ctp_chunk_ref *out)
{
	size_t n = p->nchunks;
	if (!p->view.base || n == 0)
		return false;
	for (size_t pass = 0; pass < n + 2; pass++) {
		size_t i;
		if (pass < 2) {
			struct ctp_chunk_ref first;
			struct ctp_block *b0 = ctp_view_at(&p->view, p->chunk_offs[0], sizeof(*b0));
			if (!b0 ||
			    !ctp_view_station_chunk(&p->view, b0, p->chunk_offs[0], &first) ||
			    first.count == 0)
				continue;
			size_t guess = idx / first.count;
			if (guess >= n)
				continue;
			i = pass == 0 ? guess : n - 1 - guess;
		} else {
			i = pass - 2;
		}
		struct ctp_block *b = ctp_view_at(&p->view, p->chunk_offs[i], sizeof(*b));
		if (b && ctp_view_station_chunk(&p->view, b, p->chunk_offs[i], out) &&
		    idx >= out->first && idx - out->first < out->count)
			return true;
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

static uint32_t walk_remote(struct ctp_proc *p, const struct ctp_station_snapshot *s,
			    uint32_t station, uint64_t *frames, uint32_t max)
{
	struct ctp_stackwalk *w = walker(p);
	if (!w || s->ctx_kind == CTP_CTX_NONE)
		return 0;
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
	uint32_t n =
		ctp_stackwalk_run(w, &regs, s->stack_lo, s->stack_hi, s->frames[0], frames, max);
	/* The walk raced with a resume: it may have read a mix of two stacks. */
	struct ctp_station_snapshot after;
	if (n == 0 || !station_by_index(p, station, &after) ||
	    !same_suspend(&after, s->coro, (uint32_t)s->switches, s->frames[0]))
		return 0;
	return n;
}

uint32_t ctp_deferred_stack(struct ctp_proc *p, uint64_t coro, uint32_t station, uint32_t epoch,
			    uint64_t call_site)
{
	struct ctp_station_snapshot s;
	if (station == UINT32_MAX || !maybe_same_suspend(p, station, coro, epoch) ||
	    !station_by_index(p, station, &s) || !same_suspend(&s, coro, epoch, call_site))
		return 0;
	uint64_t frames[CTP_MAX_STACK_DEPTH];
	uint32_t n = 0;
	if (s.stack_kind == CTP_STACK_DEFERRED) {
		n = s.stack_len;
		memcpy(frames, s.frames, n * sizeof(*frames));
	} else if (s.stack_kind == CTP_STACK_CALL_SITE) {
		int depth = ctp_proc_stack_depth(p);
		n = walk_remote(p, &s, station, frames, depth > 0 ? (uint32_t)depth : 0);
	}
	if (n <= 1)
		return 0;
	uint32_t id = ctp_proc_intern_stack(p, frames, n);
	struct ctp_coro *c = ctp_coro_find(&p->coros, coro);
	if (c) {
		c->deferred_stack = id;
		c->deferred_epoch = epoch;
	}
	return id;
}

uint32_t ctp_deferred_state_stack(struct ctp_proc *p, const struct ctp_station_snapshot *s)
{
	/* The same suspend as the last switch line that got a whole stack: that stack, so that the
	 * two lines agree (the station's may come from the other unwinder, at the end). */
	struct ctp_coro *c = ctp_coro_find(&p->coros, s->coro);
	if (c && c->deferred_stack && c->deferred_epoch == (uint32_t)s->switches)
		return c->deferred_stack;
	if (s->stack_len == 0)
		return 0;
	return ctp_proc_intern_stack(p, s->frames, s->stack_len);
}

#include "pstack/suspend_stack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctp/stackwalk.h"

void pstack_unwinder_close(struct pstack_unwinder *u)
{
	ctp_stackwalk_close(u->walk);
	u->walk = NULL;
}

/* Reading the process was refused (Yama's ptrace scope, another user): the stacks keep their
 * call sites, and the user learns why once. */
static void refused(struct pstack_unwinder *u)
{
	if (!u->refused)
		fprintf(stderr,
			"ctp-pstack: may not read the memory of pid %u (%s): stacks recorded as a "
			"call site show only that (run as the process's tracer, as root, or with "
			"kernel.yama.ptrace_scope=0)\n",
			u->src->pid, strerror(errno));
	u->refused = true;
	pstack_unwinder_close(u);
}

static bool open_walk(struct pstack_unwinder *u)
{
	if (!u->tried) {
		u->tried = true;
		u->walk = pstack_source_open_walk(u->src);
	}
	return u->walk && !u->refused;
}

/* A core's running coroutine (or thread): its thread's stack, from the registers the core keeps
 * for that thread. A core is a file: the walk may read anywhere in it, wherever the thread's
 * stack pointer is (a signal handler's own stack, say). */
static uint32_t walk_thread(struct pstack_unwinder *u, const struct ctp_station_snapshot *s,
			    uint64_t *pcs, uint32_t max)
{
	struct ctp_regs regs;
	if (!pstack_source_thread_regs(u->src, s->tid, &regs) || !open_walk(u))
		return 0;
	return ctp_stackwalk_run(u->walk, &regs, 0, UINT64_MAX, 0, pcs, max);
}

static uint32_t walk_saved_context(struct pstack_unwinder *u, const struct ctp_station *live,
				   uint32_t depth, const struct ctp_station_snapshot *s,
				   uint64_t *pcs, uint32_t max)
{
	struct ctp_regs regs;
	if (!open_walk(u))
		return 0;
	if (!ctp_regs_from_context(pstack_source_read, u->src, s->ctx_kind, s->saved_ctx, &regs)) {
		if (errno == EPERM)
			refused(u);
		return 0;
	}
	uint32_t n =
		ctp_stackwalk_run(u->walk, &regs, s->stack_lo, s->stack_hi, s->frames[0], pcs, max);
	/* Still the same suspend? Otherwise the walk may have read a mix of two stacks. */
	static struct ctp_station_snapshot after; /* big; one snapshot at a time */
	if (n == 0 || !ctp_station_read(live, depth, &after) || after.coro != s->coro ||
	    after.state != s->state || after.switches != s->switches || after.stack_len == 0 ||
	    after.frames[0] != s->frames[0])
		return 0;
	return n;
}

uint32_t pstack_suspend_stack(struct pstack_unwinder *u, const struct ctp_station *live,
			      uint32_t depth, const struct ctp_station_snapshot *s, uint64_t *pcs,
			      uint32_t max)
{
	/* Only a coroutine that is not running has a stack that stays put: a running one's
	 * frames in the station are those of its previous suspend. In a core its thread's stays
	 * put too. */
	if (s->state == CTP_STATE_RUNNING)
		return walk_thread(u, s, pcs, max);
	if (s->state != CTP_STATE_SUSPENDED && s->state != CTP_STATE_LEFT)
		return 0;
	if (s->stack_kind == CTP_STACK_CALL_SITE && s->ctx_kind != CTP_CTX_NONE &&
	    s->stack_len > 0) {
		uint32_t n = walk_saved_context(u, live, depth, s, pcs, max);
		if (n > 1)
			return n;
	}
	uint32_t n = s->stack_len < max ? s->stack_len : max;
	memcpy(pcs, s->frames, n * sizeof(*pcs));
	return n;
}

/* Idle coroutines: suspended at their process's end, but waiting in their runtime for work, as
 * the runtime means them to. A pool keeps finished coroutines for reuse (QEMU); a runtime keeps a
 * helper that cleans up after coroutines end (libpcl). Neither is stuck or leaked, and a report
 * that says so of every healthy QEMU run would not be believed on a broken one.
 *
 * Nothing in a hook says "pooled", so the rules below read what the trace shows of the
 * coroutine's own life, never one program's addresses (docs/report.md, "Idle coroutines"):
 *
 * pooled: its first suspend was its start handshake (its entry function switched straight back
 * to the coroutine that made it, before calling anything), and its final suspend is at its entry
 * function's top level again (the entry function, or the entry function and the one function
 * it switched through), at another place in the entry function. The entry function got past
 * the handshake and whatever it ran after it has returned: the coroutine is back at the top of a
 * runtime's loop. A coroutine whose only suspend is its last one (a forgotten one, however
 * shallow) or that suspends where it always did (a generator) is not idle.
 *
 * end helper: every resume it got was the last switch of a coroutine that then ended: it only
 * ever ran to clean up after ends.
 *
 * Both need the coroutine to wait on no fd: one that does is a wait, however it is structured. */
#include <stdlib.h>
#include <string.h>

#include "cat/analysis/analysis_internal.h"

bool ctp_analysis_tracer_frame(const struct ctp_analysis_frame *fr)
{
	if (!fr->module)
		return false;
	const char *base = strrchr(fr->module, '/');
	base = base ? base + 1 : fr->module;
	return strncmp(base, "libctp_preload", 14) == 0 || strncmp(base, "libunwind", 9) == 0;
}

const char *ctp_analysis_idle_name(enum ctp_analysis_idle why)
{
	switch (why) {
	case CTP_ANALYSIS_IDLE_NO:
		break;
	case CTP_ANALYSIS_IDLE_POOLED:
		return "pooled";
	case CTP_ANALYSIS_IDLE_END_HELPER:
		return "end_helper";
	}
	return NULL;
}

/* A suspend stack at its entry function's top level: the stack reaches the coroutine's start
 * (its outermost frame is the start, so nothing was cut off by the depth limit; in traces of
 * earlier versions, the tracer's entry trampoline), and between that frame and the tracer's
 * frames at the inner end the program has at most `max` frames, the last of them the entry
 * function. *entry_ret: the return address in the entry function. */
static bool top_level(const struct ctp_analysis *a, size_t process, uint32_t id, size_t max,
		      uint64_t *entry_ret)
{
	const struct ctp_analysis_stack *s = ctp_analysis_stack_in(a, process, id);
	if (!s || s->nframes < 2 ||
	    !(s->reaches_start || ctp_analysis_tracer_frame(&s->frames[s->nframes - 1])))
		return false;
	size_t outer = s->nframes - 1;
	while (outer > 0 && ctp_analysis_tracer_frame(&s->frames[outer - 1]))
		outer--;
	size_t inner = 0;
	while (inner < outer && ctp_analysis_tracer_frame(&s->frames[inner]))
		inner++;
	if (inner == outer || outer - inner > max)
		return false;
	*entry_ret = s->frames[outer - 1].addr;
	return true;
}

static bool pooled(const struct ctp_analysis *a, const struct an_coro *c)
{
	uint64_t handshake_at, parked_at;
	const struct an_coro *first_to =
		c->first_suspend_to ? &a->coros[c->first_suspend_to - 1] : NULL;
	return c->pub.parent && first_to && first_to->pub.id == c->pub.parent &&
	       c->pub.resumes >= 2 &&
	       top_level(a, c->pub.process, c->first_suspend_stack, 1, &handshake_at) &&
	       top_level(a, c->pub.process, ctp_an_suspend_stack(a, c), 2, &parked_at) &&
	       parked_at != handshake_at;
}

int ctp_an_find_idle(struct ctp_analysis *a, const bool *explained)
{
	/* ends_into[i]: how many coroutines that ended made their last switch into coroutine i. */
	uint32_t *ends_into = calloc(a->ncoros ? a->ncoros : 1, sizeof(*ends_into));
	if (!ends_into)
		return -1;
	for (size_t i = 0; i < a->ncoros; i++) {
		const struct an_coro *c = &a->coros[i];
		if ((c->pub.ended || c->pub.state == CTP_ANALYSIS_STATE_EXITED) &&
		    c->last_suspend_to)
			ends_into[c->last_suspend_to - 1]++;
	}
	for (size_t i = 0; i < a->ncoros; i++) {
		struct an_coro *c = &a->coros[i];
		const char *op;
		if (explained[i] || (c->pub.kind && strcmp(c->pub.kind, "thread") == 0) ||
		    !ctp_an_suspended_at_end(c) || ctp_an_final_wait_fd(a, c, &op) >= 0)
			continue;
		if (pooled(a, c))
			c->pub.idle = CTP_ANALYSIS_IDLE_POOLED;
		else if (c->pub.resumes && ends_into[i] == c->pub.resumes)
			c->pub.idle = CTP_ANALYSIS_IDLE_END_HELPER;
		if (c->pub.idle)
			a->sum.idle++;
	}
	free(ends_into);
	return 0;
}

/* What the dashboard keeps while the trace is read: every switch per thread, for the timeline,
 * and each coroutine's first and last events, for its history. Memory: 16 bytes per switch plus
 * a bounded history per coroutine, allocated as its events come. Coroutines and processes are the
 * analysis's (the one table of them): this only adds what the page shows beyond the model. */
#include <stdlib.h>
#include <string.h>

#include "cat/html/html.h"
#include "cat/model/grow.h"

void ctp_html_collect_init(struct ctp_html_collect *c, const struct ctp_analysis *a)
{
	memset(c, 0, sizeof(*c));
	c->a = a;
}

void ctp_html_collect_free(struct ctp_html_collect *c)
{
	for (size_t i = 0; i < c->ncoros; i++) {
		free(c->coros[i].head);
		free(c->coros[i].tail);
	}
	for (size_t i = 0; i < c->nthreads; i++)
		free(c->threads[i].sw);
	free(c->recent_ended);
	free(c->coros);
	free(c->threads);
	ctp_idmap_free(&c->thread_index);
	memset(c, 0, sizeof(*c));
}

/* The analysis's index of coroutine `id` of the event's process (the stage fed the event to
 * the analysis first, so it is there), with room for its history; CTP_HTML_NONE for id 0. */
static int coro_of(struct ctp_html_collect *c, const struct ctp_event *ev, uint64_t id,
		   uint32_t *index)
{
	*index = CTP_HTML_NONE;
	const struct ctp_analysis_process *p = ctp_analysis_process_find(c->a, ev->pid);
	const struct ctp_analysis_coro *co =
		p && id ? ctp_analysis_coro_in(c->a, p->index, id) : NULL;
	if (!co)
		return 0;
	size_t had = c->ncoros;
	if (co->index >= had) {
		if (CTP_GROW(c->coros, c->cap_coros, co->index + 1) < 0)
			return -1;
		memset(c->coros + had, 0, (co->index + 1 - had) * sizeof(*c->coros));
		c->ncoros = co->index + 1;
	}
	*index = (uint32_t)co->index;
	return 0;
}

static int thread_of(struct ctp_html_collect *c, const struct ctp_event *ev,
		     struct ctp_html_thread **th)
{
	const struct ctp_analysis_process *p = ctp_analysis_process_find(c->a, ev->pid);
	uint32_t process = p ? (uint32_t)p->index : CTP_HTML_NONE;
	uint32_t index = ctp_idmap_get(&c->thread_index, process, ev->tid);
	if (index == CTP_IDMAP_NONE) {
		if (CTP_GROW(c->threads, c->cap_threads, c->nthreads + 1) < 0)
			return -1;
		index = (uint32_t)c->nthreads;
		c->threads[c->nthreads++] =
			(struct ctp_html_thread){.process = process, .tid = ev->tid};
		if (ctp_idmap_put(&c->thread_index, process, ev->tid, index) < 0)
			return -1;
	}
	*th = &c->threads[index];
	return 0;
}

/* The events a head holds at first: a coroutine made, resumed, suspended and ended has 4-8. */
enum { HEAD_FIRST = 8 };
_Static_assert(CTP_HTML_HISTORY_HEAD % HEAD_FIRST == 0 &&
		       ((CTP_HTML_HISTORY_HEAD / HEAD_FIRST) &
			(CTP_HTML_HISTORY_HEAD / HEAD_FIRST - 1)) == 0,
	       "a head doubles up to CTP_HTML_HISTORY_HEAD exactly");

static int add_event(struct ctp_html_coro *co, const struct ctp_html_event *ev)
{
	if (co->dropped) {
		co->after_head++; /* counted, not kept */
		return 0;
	}
	if (co->nhead < CTP_HTML_HISTORY_HEAD) {
		if (co->nhead == co->cap_head) {
			uint8_t cap = co->cap_head ? 2 * co->cap_head : HEAD_FIRST;
			struct ctp_html_event *head = realloc(co->head, cap * sizeof(*head));
			if (!head)
				return -1;
			co->head = head;
			co->cap_head = cap;
		}
		co->head[co->nhead++] = *ev;
		return 0;
	}
	if (!co->tail) {
		co->tail = malloc(CTP_HTML_HISTORY_TAIL * sizeof(*co->tail));
		if (!co->tail)
			return -1;
	}
	co->tail[co->after_head % CTP_HTML_HISTORY_TAIL] = *ev;
	co->after_head++;
	return 0;
}

/* The latest event kept of `co`, NULL when none. */
static struct ctp_html_event *last_event(struct ctp_html_coro *co)
{
	if (co->dropped)
		return NULL; /* a switch away after its end, long after: a garbled trace */
	if (co->after_head)
		return &co->tail[(co->after_head - 1) % CTP_HTML_HISTORY_TAIL];
	return co->nhead ? &co->head[co->nhead - 1] : NULL;
}

uint64_t ctp_html_history(const struct ctp_html_coro *co, struct ctp_html_event *out, size_t *n,
			  size_t *omitted_at)
{
	if (co->dropped) {
		*n = *omitted_at = 0;
		return co->nhead + co->after_head;
	}
	size_t k = 0;
	for (uint32_t i = 0; i < co->nhead; i++)
		out[k++] = co->head[i];
	uint64_t kept =
		co->after_head < CTP_HTML_HISTORY_TAIL ? co->after_head : CTP_HTML_HISTORY_TAIL;
	for (uint64_t i = co->after_head - kept; i < co->after_head; i++)
		out[k++] = co->tail[i % CTP_HTML_HISTORY_TAIL];
	*n = k;
	*omitted_at = co->nhead;
	return co->after_head - kept;
}

static int on_coro(struct ctp_html_collect *c, const struct ctp_event *ev)
{
	uint32_t index, parent;
	if (coro_of(c, ev, ev->coro, &index) < 0 ||
	    coro_of(c, ev, ev->coro_line.parent, &parent) < 0)
		return -1;
	if (index == CTP_HTML_NONE)
		return 0;
	struct ctp_html_event created = {
		.ts = ev->ts,
		.tid = ev->tid,
		.stack = ev->stack,
		.peer = parent, /* the coroutine it was created by, when known */
		.kind = CTP_HTML_EV_CREATED,
	};
	return add_event(&c->coros[index], &created);
}

/* Frees a history the page will not show; its events are still counted. */
static void drop_history(struct ctp_html_coro *co)
{
	free(co->head);
	free(co->tail);
	co->head = co->tail = NULL;
	co->cap_head = 0;
	co->dropped = true;
}

/* Coroutine `index` ended: its history is kept while it is among the first or the last
 * CTP_HTML_ENDED_ROWS / 2 to end, the ones the page lists (html_data.c), so that memory follows
 * the live coroutines and not the trace's length: the one that ended that many ends before it
 * gives its history up now. */
static int note_ended(struct ctp_html_collect *c, uint32_t index)
{
	const uint64_t half = CTP_HTML_ENDED_ROWS / 2;
	uint64_t k = c->ended++;
	if (k < half)
		return 0;
	if (!c->recent_ended && !(c->recent_ended = malloc(half * sizeof(*c->recent_ended))))
		return -1;
	uint32_t *slot = &c->recent_ended[(k - half) % half];
	if (k >= 2 * half && *slot != index)
		drop_history(&c->coros[*slot]);
	*slot = index;
	return 0;
}

/* A coroutine's end (the one lifecycle: its coro_end event). */
static int on_coro_end(struct ctp_html_collect *c, const struct ctp_event *ev)
{
	uint32_t index;
	if (coro_of(c, ev, ev->coro, &index) < 0)
		return -1;
	if (index == CTP_HTML_NONE)
		return 0;
	struct ctp_html_event ended = {
		.ts = ev->ts, .tid = ev->tid, .peer = CTP_HTML_NONE, .kind = CTP_HTML_EV_ENDED};
	if (add_event(&c->coros[index], &ended) < 0)
		return -1;
	return note_ended(c, index);
}

static int on_switch(struct ctp_html_collect *c, const struct ctp_event *ev)
{
	uint32_t from, to;
	if (coro_of(c, ev, ev->sw.from, &from) < 0 || coro_of(c, ev, ev->sw.to, &to) < 0)
		return -1;
	if (from != CTP_HTML_NONE) {
		/* The switch away from a coroutine that just ended (its coro_end comes right
		 * before) is not a suspend: it says whom the end went to. */
		struct ctp_html_event *last = last_event(&c->coros[from]);
		if (last && last->kind == CTP_HTML_EV_ENDED && last->ts == ev->ts) {
			last->peer = to;
			last->stack = ev->stack;
		} else {
			struct ctp_html_event leave = {
				.ts = ev->ts,
				.tid = ev->tid,
				.stack = ev->stack,
				.peer = to,
				.kind = CTP_HTML_EV_SUSPENDED,
			};
			if (add_event(&c->coros[from], &leave) < 0)
				return -1;
		}
	}
	if (to != CTP_HTML_NONE) {
		struct ctp_html_event enter = {
			.ts = ev->ts, .tid = ev->tid, .peer = from, .kind = CTP_HTML_EV_RESUMED};
		if (add_event(&c->coros[to], &enter) < 0)
			return -1;
	}
	struct ctp_html_thread *th;
	if (thread_of(c, ev, &th) < 0 || CTP_GROW(th->sw, th->cap, th->n + 1) < 0)
		return -1;
	th->sw[th->n++] = (struct ctp_html_switch){.ts = ev->ts, .from = from, .to = to};
	c->switches++;
	return 0;
}

int ctp_html_collect_event(struct ctp_html_collect *c, const struct ctp_event *ev)
{
	switch (ev->type) {
	case CTP_EV_CORO:
		return on_coro(c, ev);
	case CTP_EV_CORO_END:
		return on_coro_end(c, ev);
	case CTP_EV_SWITCH:
		return on_switch(c, ev);
	default:
		return 0;
	}
}

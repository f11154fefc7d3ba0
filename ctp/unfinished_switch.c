#include "ctp/unfinished_switch.h"

#include <stdlib.h>

#include "ctp/segment.h"
#include "ctp/xalloc.h"

void ctp_unfinished_init(struct ctp_unfinished_switches *u)
{
	*u = (struct ctp_unfinished_switches){0};
}

void ctp_unfinished_free(struct ctp_unfinished_switches *u)
{
	free(u->slots);
	free(u->next);
	ctp_unfinished_init(u);
}

static size_t slot_of(size_t cap, uint32_t tid)
{
	return (size_t)((tid * 0x9e3779b1u) & (cap - 1));
}

static struct ctp_thread_tail *find(const struct ctp_unfinished_switches *u, uint32_t tid)
{
	if (u->cap == 0)
		return NULL;
	for (size_t i = slot_of(u->cap, tid);; i = (i + 1) & (u->cap - 1)) {
		struct ctp_thread_tail *t = &u->slots[i];
		if (t->tid == tid)
			return t;
		if (t->tid == 0)
			return NULL;
	}
}

static void grow(struct ctp_unfinished_switches *u)
{
	struct ctp_unfinished_switches bigger = {
		.slots = ctp_xcalloc(u->cap ? u->cap * 2 : 64, sizeof(*u->slots)),
		.cap = u->cap ? u->cap * 2 : 64,
		.n = u->n,
		.next = u->next,
		.nnext = u->nnext,
	};
	for (size_t i = 0; i < u->cap; i++) {
		if (u->slots[i].tid == 0)
			continue;
		size_t k = slot_of(bigger.cap, u->slots[i].tid);
		while (bigger.slots[k].tid)
			k = (k + 1) & (bigger.cap - 1);
		bigger.slots[k] = u->slots[i];
	}
	free(u->slots);
	*u = bigger;
}

static struct ctp_thread_tail *get(struct ctp_unfinished_switches *u, uint32_t tid)
{
	struct ctp_thread_tail *t = find(u, tid);
	if (t)
		return t;
	if (2 * (u->n + 1) > u->cap)
		grow(u);
	size_t i = slot_of(u->cap, tid);
	while (u->slots[i].tid)
		i = (i + 1) & (u->cap - 1);
	u->n++;
	u->slots[i] = (struct ctp_thread_tail){.tid = tid, .last_state = CTP_STATE_FREE};
	return &u->slots[i];
}

void ctp_unfinished_note(struct ctp_unfinished_switches *u, uint32_t idx,
			 const struct ctp_station_snapshot *s)
{
	if (s->tid == 0)
		return;
	struct ctp_thread_tail *t = get(u, s->tid);
	if (s->kind == CTP_KIND_THREAD && s->state != CTP_STATE_EXITED)
		t->alive = true;
	if (s->state == CTP_STATE_RUNNING)
		t->any_running = true;
	/* Every station a thread touched carries that thread's tid (a resume sets it, a suspend
	 * keeps it) and the time it was touched; a switch's two updates share one time, and any
	 * earlier switch of the thread came before it. A coroutine made there and never run has
	 * no last_switch and touches nothing. A torn station is the one its thread was writing
	 * when it stopped, touched after all the others whatever its time says yet: a suspend or
	 * an end writes the state before the time, and the old time ties with the station that
	 * resumed this one. */
	uint64_t touched = s->torn ? UINT64_MAX : s->last_switch;
	if (touched && touched >= t->last_ts) {
		t->last_ts = touched;
		t->last_state = s->state;
		t->last_idx = idx;
		t->last_ended_to = s->ended_to;
	}
}

/* Whether the thread was stopped with nothing running on it, in a switch or an end. */
static bool stopped_midway(const struct ctp_thread_tail *t)
{
	return t->alive && !t->any_running;
}

static int by_idx(const void *x, const void *y)
{
	const struct ctp_resumed_next *a = x, *b = y;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void ctp_unfinished_settle(struct ctp_unfinished_switches *u)
{
	for (size_t i = 0; i < u->cap; i++) {
		const struct ctp_thread_tail *t = &u->slots[i];
		if (t->tid == 0 || !stopped_midway(t) || t->last_state != CTP_STATE_EXITED ||
		    t->last_ended_to == 0)
			continue;
		u->next = ctp_xrealloc(u->next, (u->nnext + 1) * sizeof(*u->next));
		u->next[u->nnext++] = (struct ctp_resumed_next){t->last_ended_to - 1, t->tid};
	}
	if (u->nnext > 1)
		qsort(u->next, u->nnext, sizeof(*u->next), by_idx);
}

static bool resumable(uint32_t state)
{
	return state == CTP_STATE_SUSPENDED || state == CTP_STATE_LEFT ||
	       state == CTP_STATE_CREATED;
}

bool ctp_unfinished_was_running(const struct ctp_unfinished_switches *u, uint32_t idx,
				const struct ctp_station_snapshot *s, uint32_t *tid)
{
	if (!resumable(s->state))
		return false;
	/* Resumed next by a thread stopped after an end and before that resume. */
	struct ctp_resumed_next key = {.idx = idx};
	const struct ctp_resumed_next *n =
		u->nnext ? bsearch(&key, u->next, u->nnext, sizeof(*u->next), by_idx) : NULL;
	if (n) {
		*tid = n->tid;
		return true;
	}
	/* Left by a thread stopped before it resumed the other side: only a thread that lived to
	 * the end, with nothing running on it, whose last update was this suspend. */
	if (s->state == CTP_STATE_CREATED || s->tid == 0)
		return false;
	const struct ctp_thread_tail *t = find(u, s->tid);
	if (!t || !stopped_midway(t) || t->last_state != s->state || t->last_idx != idx)
		return false;
	*tid = s->tid;
	return true;
}

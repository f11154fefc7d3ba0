/* What the dashboard keeps while the trace is read: every switch per thread, for the timeline,
 * and each coroutine's first and last events, for its history. Memory: 16 bytes per switch plus
 * a bounded history per coroutine. */
#include <stdlib.h>
#include <string.h>

#include "cat/html.h"

/* ---- growable arrays ---- */

static int grow(void **items, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *p = realloc(*items, n * size);
	if (!p)
		return -1;
	*items = p;
	*cap = n;
	return 0;
}

/* ---- the collector ---- */

int ctp_html_collect_init(struct ctp_html_collect *c)
{
	memset(c, 0, sizeof(*c));
	c->current_record = ctp_html_map_new();
	c->coro_index = ctp_html_map_new();
	c->thread_index = ctp_html_map_new();
	if (!c->current_record || !c->coro_index || !c->thread_index) {
		ctp_html_collect_free(c);
		return -1;
	}
	return 0;
}

void ctp_html_collect_free(struct ctp_html_collect *c)
{
	for (size_t i = 0; i < c->ncoros; i++) {
		free(c->coros[i].head);
		free(c->coros[i].tail);
	}
	for (size_t i = 0; i < c->nthreads; i++)
		free(c->threads[i].sw);
	free(c->coros);
	free(c->threads);
	free(c->record_pid);
	ctp_html_map_free(c->current_record);
	ctp_html_map_free(c->coro_index);
	ctp_html_map_free(c->thread_index);
	memset(c, 0, sizeof(*c));
}

static uint64_t u64_field(const json_t *line, const char *name)
{
	const json_t *v = json_object_get(line, name);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

static int new_record(struct ctp_html_collect *c, uint32_t pid, uint32_t *record)
{
	if (grow((void **)&c->record_pid, &c->cap_records, c->nrecords + 1, sizeof(uint32_t)) < 0)
		return -1;
	*record = (uint32_t)c->nrecords;
	c->record_pid[c->nrecords++] = pid;
	return ctp_html_map_put(c->current_record, pid, 0, *record);
}

/* The record a line of `pid` belongs to: its latest `process` line, or a new record when that
 * line was never seen. */
static int record_of(struct ctp_html_collect *c, uint32_t pid, uint32_t *record)
{
	*record = ctp_html_map_get(c->current_record, pid, 0);
	return *record == CTP_HTML_NONE ? new_record(c, pid, record) : 0;
}

uint32_t ctp_html_collect_find(const struct ctp_html_collect *c, uint32_t record, uint64_t id)
{
	return ctp_html_map_get(c->coro_index, record, id);
}

static int coro_of(struct ctp_html_collect *c, uint32_t record, uint64_t id, uint32_t *index)
{
	*index = ctp_html_map_get(c->coro_index, record, id);
	if (*index != CTP_HTML_NONE)
		return 0;
	if (grow((void **)&c->coros, &c->cap_coros, c->ncoros + 1, sizeof(*c->coros)) < 0)
		return -1;
	*index = (uint32_t)c->ncoros;
	c->coros[c->ncoros++] = (struct ctp_html_coro){.record = record, .id = id};
	return ctp_html_map_put(c->coro_index, record, id, *index);
}

static int thread_of(struct ctp_html_collect *c, uint32_t record, uint32_t tid,
		     struct ctp_html_thread **th)
{
	uint32_t index = ctp_html_map_get(c->thread_index, record, tid);
	if (index == CTP_HTML_NONE) {
		if (grow((void **)&c->threads, &c->cap_threads, c->nthreads + 1,
			 sizeof(*c->threads)) < 0)
			return -1;
		index = (uint32_t)c->nthreads;
		c->threads[c->nthreads++] = (struct ctp_html_thread){.record = record, .tid = tid};
		if (ctp_html_map_put(c->thread_index, record, tid, index) < 0)
			return -1;
	}
	*th = &c->threads[index];
	return 0;
}

static int add_event(struct ctp_html_coro *co, const struct ctp_html_event *ev)
{
	if (co->nhead < CTP_HTML_HISTORY_HEAD) {
		if (!co->head) {
			co->head = malloc(CTP_HTML_HISTORY_HEAD * sizeof(*co->head));
			if (!co->head)
				return -1;
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

uint64_t ctp_html_history(const struct ctp_html_coro *co, struct ctp_html_event *out, size_t *n,
			  size_t *omitted_at)
{
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

static int on_coro(struct ctp_html_collect *c, uint32_t record, const json_t *line)
{
	uint32_t index;
	if (coro_of(c, record, u64_field(line, "coro"), &index) < 0)
		return -1;
	struct ctp_html_event ev = {
		.ts = u64_field(line, "ts"),
		.tid = (uint32_t)u64_field(line, "tid"),
		.stack = (uint32_t)u64_field(line, "stack"),
		.peer = CTP_HTML_NONE,
		.kind = CTP_HTML_EV_CREATED,
	};
	/* The parent, when known, is the coroutine it was created by. */
	uint64_t parent = u64_field(line, "parent");
	if (parent)
		ev.peer = ctp_html_collect_find(c, record, parent);
	return add_event(&c->coros[index], &ev);
}

static int on_switch(struct ctp_html_collect *c, uint32_t record, const json_t *line)
{
	uint32_t from, to;
	if (coro_of(c, record, u64_field(line, "from"), &from) < 0 ||
	    coro_of(c, record, u64_field(line, "to"), &to) < 0)
		return -1;
	uint64_t ts = u64_field(line, "ts");
	uint32_t tid = (uint32_t)u64_field(line, "tid");
	const char *how = json_string_value(json_object_get(line, "how"));
	bool ended = how && strcmp(how, "return") == 0;

	struct ctp_html_event leave = {
		.ts = ts,
		.tid = tid,
		.stack = (uint32_t)u64_field(line, "stack"),
		.peer = to,
		.kind = ended ? CTP_HTML_EV_ENDED : CTP_HTML_EV_SUSPENDED,
	};
	struct ctp_html_event enter = {
		.ts = ts, .tid = tid, .peer = from, .kind = CTP_HTML_EV_RESUMED};
	if (add_event(&c->coros[from], &leave) < 0 || add_event(&c->coros[to], &enter) < 0)
		return -1;

	struct ctp_html_thread *th;
	if (thread_of(c, record, tid, &th) < 0 ||
	    grow((void **)&th->sw, &th->cap, th->n + 1, sizeof(*th->sw)) < 0)
		return -1;
	th->sw[th->n++] = (struct ctp_html_switch){.ts = ts, .from = from, .to = to};
	c->switches++;
	return 0;
}

int ctp_html_collect_line(struct ctp_html_collect *c, const json_t *line)
{
	const char *type = json_string_value(json_object_get(line, "type"));
	if (!type)
		return 0;
	bool is_process = strcmp(type, "process") == 0;
	bool is_coro = !is_process && strcmp(type, "coro") == 0;
	bool is_switch = !is_process && !is_coro && strcmp(type, "switch") == 0;
	if (!is_process && !is_coro && !is_switch)
		return 0;
	uint32_t pid = (uint32_t)u64_field(line, "pid");
	uint32_t record;
	if (is_process)
		return new_record(c, pid, &record);
	if (record_of(c, pid, &record) < 0)
		return -1;
	return is_coro ? on_coro(c, record, line) : on_switch(c, record, line);
}

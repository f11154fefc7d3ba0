/* The view for scripts: one JSON document (schema in docs/ctp-pstack.md, "JSON"). Written with
 * the project's JSON writer into a buffer that is flushed as it grows, so that a million
 * coroutines cost no more memory than their lines. */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "ctp/emit.h"
#include "ctp/jsonw.h"
#include "ctp/segment.h"
#include "pstack/view.h"

enum { FLUSH_BYTES = 1 << 16 };

static void flush(struct ctp_jsonw *w, FILE *f, bool always)
{
	if (!always && w->len < FLUSH_BYTES)
		return;
	fwrite(w->buf, 1, w->len, f);
	ctp_jsonw_reset(w);
}

static void put_name(struct pstack_view *v, struct ctp_jsonw *w, uint64_t addr, bool return_address)
{
	const struct ctp_sym *s = pstack_symbol(v, addr, return_address);
	if (s->sym) {
		ctp_jsonw_str(w, s->sym);
	} else {
		/* An unknown function is named by its address, as the report does. */
		ctp_jsonw_hex(w, addr);
	}
}

static void put_names(struct pstack_view *v, struct ctp_jsonw *w, uint32_t stack)
{
	CTP_JSONW_LIT(w, "[");
	if (stack) {
		uint32_t n;
		const uint64_t *pcs = pstack_stack_frames(v->snap, stack, &n, NULL);
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				CTP_JSONW_LIT(w, ",");
			put_name(v, w, pcs[i], true);
		}
	}
	CTP_JSONW_LIT(w, "]");
}

static void put_summary(struct pstack_view *v, struct ctp_jsonw *w)
{
	const struct pstack_snapshot *s = v->snap;
	size_t count[CTP_STATE_LEFT + 1];
	size_t threads = pstack_count_states(s, count);
	CTP_JSONW_LIT(w, "\"summary\":{\"coroutines\":");
	ctp_jsonw_u64(w, s->ncoros - threads);
	CTP_JSONW_LIT(w, ",\"threads\":");
	ctp_jsonw_u64(w, threads);
	for (uint32_t st = CTP_STATE_CREATED; st <= CTP_STATE_LEFT; st++) {
		if (st == CTP_STATE_EXITED)
			continue;
		CTP_JSONW_LIT(w, ",\"");
		ctp_jsonw_raw(w, pstack_state_name(st), strlen(pstack_state_name(st)));
		CTP_JSONW_LIT(w, "\":");
		ctp_jsonw_u64(w, count[st]);
	}
	CTP_JSONW_LIT(w, ",\"ended\":");
	ctp_jsonw_u64(w, s->ended);
	CTP_JSONW_LIT(w, ",\"torn\":");
	ctp_jsonw_u64(w, s->torn);
	CTP_JSONW_LIT(w, ",\"stations_lost\":");
	ctp_jsonw_u64(w, s->stations_lost);
	CTP_JSONW_LIT(w, ",\"read_ns\":");
	ctp_jsonw_u64(w, s->read_ns);
	CTP_JSONW_LIT(w, "}");
}

static void put_coro(struct pstack_view *v, struct ctp_jsonw *w, const struct pstack_coro *c)
{
	const struct pstack_snapshot *s = v->snap;
	CTP_JSONW_LIT(w, "{\"coro\":");
	ctp_jsonw_u64(w, c->coro);
	CTP_JSONW_LIT(w, ",\"kind\":");
	ctp_jsonw_str(w, pstack_kind_name(c->kind));
	CTP_JSONW_LIT(w, ",\"entry\":");
	if (c->entry)
		put_name(v, w, c->entry, false);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"entry_addr\":");
	ctp_jsonw_hex(w, c->entry);
	CTP_JSONW_LIT(w, ",\"state\":");
	ctp_jsonw_str(w, pstack_state_name(c->state));
	CTP_JSONW_LIT(w, ",\"since\":");
	if (s->ns_per_tick > 0)
		ctp_jsonw_u64(w, pstack_mono_ns(s, c->since_raw));
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"ago_ns\":");
	if (s->ns_per_tick > 0)
		ctp_jsonw_u64(w, pstack_ago_ns(s, c->since_raw));
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"tid\":");
	ctp_jsonw_u64(w, c->tid);
	CTP_JSONW_LIT(w, ",\"switches\":");
	ctp_jsonw_u64(w, c->switches);
	CTP_JSONW_LIT(w, ",\"wait\":");
	if (c->wait_fd >= 0) {
		CTP_JSONW_LIT(w, "{\"fd\":");
		ctp_jsonw_i64(w, c->wait_fd);
		CTP_JSONW_LIT(w, ",\"op\":");
		ctp_jsonw_str(w, pstack_op_name(c->wait_op));
		if (c->wait_closed)
			CTP_JSONW_LIT(w, ",\"closed\":true}");
		else
			CTP_JSONW_LIT(w, ",\"closed\":false}");
	} else {
		ctp_jsonw_null(w);
	}
	CTP_JSONW_LIT(w, ",\"stack\":");
	if (c->stack)
		ctp_jsonw_u64(w, c->stack);
	else
		ctp_jsonw_null(w);
	if (c->torn)
		CTP_JSONW_LIT(w, ",\"consistent\":false}");
	else
		CTP_JSONW_LIT(w, ",\"consistent\":true}");
}

static void put_stack(struct pstack_view *v, struct ctp_jsonw *w, uint32_t id)
{
	uint32_t n;
	const uint64_t *pcs = pstack_stack_frames(v->snap, id, &n, NULL);
	CTP_JSONW_LIT(w, "{\"id\":");
	ctp_jsonw_u64(w, id);
	CTP_JSONW_LIT(w, ",\"names\":");
	put_names(v, w, id);
	CTP_JSONW_LIT(w, ",\"frames\":[");
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			CTP_JSONW_LIT(w, ",");
		ctp_emit_frame_json(w, pcs[i], pstack_symbol(v, pcs[i], true));
	}
	CTP_JSONW_LIT(w, "]}");
}

static void put_group(struct pstack_view *v, struct ctp_jsonw *w, const struct pstack_group *g)
{
	CTP_JSONW_LIT(w, "{\"count\":");
	ctp_jsonw_u64(w, g->count);
	CTP_JSONW_LIT(w, ",\"state\":");
	ctp_jsonw_str(w, pstack_state_name(g->state));
	CTP_JSONW_LIT(w, ",\"stack\":");
	if (g->stack)
		ctp_jsonw_u64(w, g->stack);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"names\":");
	put_names(v, w, g->stack);
	CTP_JSONW_LIT(w, ",\"wait\":");
	if (g->wait_op != CTP_OP_NONE) {
		CTP_JSONW_LIT(w, "{\"op\":");
		ctp_jsonw_str(w, pstack_op_name(g->wait_op));
		if (g->wait_closed)
			CTP_JSONW_LIT(w, ",\"closed\":true}");
		else
			CTP_JSONW_LIT(w, ",\"closed\":false}");
	} else {
		ctp_jsonw_null(w);
	}
	CTP_JSONW_LIT(w, ",\"coros\":[");
	for (size_t k = 0; k < g->count; k++) {
		if (k)
			CTP_JSONW_LIT(w, ",");
		ctp_jsonw_u64(w, v->snap->coros[v->groups->members[g->first + k]].coro);
		flush(w, v->out, false);
	}
	CTP_JSONW_LIT(w, "]}");
}

static void put_core(struct pstack_view *v, struct ctp_jsonw *w)
{
	const struct pstack_core_facts *c = v->core;
	CTP_JSONW_LIT(w, ",\"core\":");
	if (!c) {
		ctp_jsonw_null(w);
		return;
	}
	CTP_JSONW_LIT(w, "{\"path\":");
	ctp_jsonw_str(w, c->path);
	CTP_JSONW_LIT(w, ",\"executable\":");
	if (c->executable)
		ctp_jsonw_str(w, c->executable);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"signal\":");
	if (c->signal) {
		ctp_jsonw_u64(w, (uint64_t)c->signal);
		CTP_JSONW_LIT(w, ",\"signal_tid\":");
		ctp_jsonw_u64(w, c->signal_tid);
	} else {
		CTP_JSONW_LIT(w, "null,\"signal_tid\":null");
	}
	if (v->snap->now_at_latest_switch)
		CTP_JSONW_LIT(w, ",\"taken_at_latest_switch\":true}");
	else
		CTP_JSONW_LIT(w, ",\"taken_at_latest_switch\":false}");
}

void pstack_write_json(struct pstack_view *v)
{
	const struct pstack_snapshot *s = v->snap;
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	CTP_JSONW_LIT(&w, "{\"pstack\":1,\"pid\":");
	ctp_jsonw_u64(&w, s->pid);
	CTP_JSONW_LIT(&w, ",\"command\":");
	ctp_jsonw_str(&w, v->command);
	CTP_JSONW_LIT(&w, ",\"taken\":");
	ctp_jsonw_u64(&w, s->now_mono_ns);
	CTP_JSONW_LIT(&w, ",\"stack_depth\":");
	ctp_jsonw_u64(&w, s->stack_depth);
	put_core(v, &w);
	CTP_JSONW_LIT(&w, ",");
	put_summary(v, &w);
	CTP_JSONW_LIT(&w, ",\n\"groups\":[");
	for (size_t i = 0; i < v->groups->ngroups; i++) {
		if (i)
			CTP_JSONW_LIT(&w, ",\n");
		else
			CTP_JSONW_LIT(&w, "\n");
		put_group(v, &w, &v->groups->groups[i]);
		flush(&w, v->out, false);
	}
	CTP_JSONW_LIT(&w, "],\n\"stacks\":[");
	for (uint32_t id = 1; id <= s->nstack_refs; id++) {
		if (id > 1)
			CTP_JSONW_LIT(&w, ",\n");
		else
			CTP_JSONW_LIT(&w, "\n");
		put_stack(v, &w, id);
		flush(&w, v->out, false);
	}
	CTP_JSONW_LIT(&w, "],\n\"coroutines\":[");
	for (size_t i = 0; i < s->ncoros; i++) {
		if (i)
			CTP_JSONW_LIT(&w, ",\n");
		else
			CTP_JSONW_LIT(&w, "\n");
		put_coro(v, &w, &s->coros[i]);
		flush(&w, v->out, false);
	}
	CTP_JSONW_LIT(&w, "]}\n");
	flush(&w, v->out, true);
	ctp_jsonw_free(&w);
}

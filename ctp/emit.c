#include "ctp/emit.h"

#include <stdio.h>
#include <string.h>

#include "ctp/names.h"
#include "ctp/segment.h"
#include "ctp/version.h"

void ctp_emit_init(struct ctp_emitter *e, struct ctp_zwriter *z)
{
	e->z = z;
	e->text = ctp_zwriter_text(z);
	e->line_start = 0;
	e->processes = e->coros = e->switches = e->lost = 0;
	/* Copied whole on every switch line (ctp_emit_switch): no byte of them left undefined. */
	memset(e->switch_heads, 0, sizeof(e->switch_heads));
	memset(e->switch_tails, 0, sizeof(e->switch_tails));
	memset(e->how_json, 0, sizeof(e->how_json));
	/* A switch line's `how` and the key after it, made once from the names table: nearly
	 * every line is a switch, and this spares escaping the same word each time. */
	for (uint32_t how = 0; how < CTP_EMIT_HOW_COUNT; how++) {
		const char *name = ctp_name_of(&ctp_switch_how_names, how);
		int n = name ? snprintf(e->how_json[how], sizeof(e->how_json[how]),
					",\"how\":\"%s\",\"stack\":", name)
			     : snprintf(e->how_json[how], sizeof(e->how_json[how]),
					",\"how\":null,\"stack\":");
		e->how_len[how] = (uint8_t)n;
	}
}

/* Lines are written straight into the frame the zstd writer is building. */
static struct ctp_jsonw *begin_line(struct ctp_emitter *e)
{
	struct ctp_jsonw *w = e->text;
	e->line_start = w->len;
	return w;
}

static void end_line(struct ctp_emitter *e)
{
	CTP_JSONW_LIT(e->text, "}\n");
	ctp_zwriter_lines_added(e->z, e->line_start, 1);
}

/* A number, or null when it is not known. */
static void u64_if(struct ctp_jsonw *w, bool known, uint64_t v)
{
	if (known)
		ctp_jsonw_u64(w, v);
	else
		ctp_jsonw_null(w);
}

/* A number, or null when zero means unknown. */
static void u64_or_null(struct ctp_jsonw *w, uint64_t v)
{
	if (v)
		ctp_jsonw_u64(w, v);
	else
		ctp_jsonw_null(w);
}

/* The last line of a trace whose writer finished: a reader that does not find it knows the
 * trace is incomplete (docs/trace-format.md). It counts the lines written (those still pending
 * go into the same frame as this line) and those a write error lost, so that a reader can tell
 * a trace with holes from a whole one. */
void ctp_emit_end(struct ctp_emitter *e)
{
	struct ctp_zwriter_stats st;
	ctp_zwriter_stats(e->z, &st);
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"end\",\"lines\":");
	ctp_jsonw_u64(w, st.lines - st.lost_lines);
	CTP_JSONW_LIT(w, ",\"lost\":");
	ctp_jsonw_u64(w, e->lost);
	if (st.lost_lines) {
		CTP_JSONW_LIT(w, ",\"unwritten\":");
		ctp_jsonw_u64(w, st.lost_lines);
	}
	end_line(e);
}

/* states NULL: the line leaves its count out. */
static void emit_snapshot(struct ctp_emitter *e, uint32_t pid, uint64_t ts, const uint64_t *states)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"snapshot\",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"ts\":");
	ctp_jsonw_u64(w, ts);
	if (states) {
		CTP_JSONW_LIT(w, ",\"states\":");
		ctp_jsonw_u64(w, *states);
	}
	end_line(e);
}

void ctp_emit_snapshot(struct ctp_emitter *e, uint32_t pid, uint64_t ts)
{
	emit_snapshot(e, pid, ts, NULL);
}

void ctp_emit_snapshot_counted(struct ctp_emitter *e, uint32_t pid, uint64_t ts, uint64_t states)
{
	emit_snapshot(e, pid, ts, &states);
}

void ctp_emit_trace(struct ctp_emitter *e, uint64_t start_ns)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":");
	ctp_jsonw_str(w, ctp_version_string());
	CTP_JSONW_LIT(w, ",\"start\":");
	ctp_jsonw_u64(w, start_ns);
	end_line(e);
}

void ctp_emit_process(struct ctp_emitter *e, uint32_t pid, uint32_t ppid, const char *strings,
		      size_t len, uint32_t argc, int stack_depth)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"process\",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"ppid\":");
	ctp_jsonw_u64(w, ppid);
	CTP_JSONW_LIT(w, ",\"exe\":");
	/* Each string runs to its NUL or to the end of the message, whichever comes first; argc
	 * is not trusted beyond the strings that are there. */
	size_t pos = 0;
	if (len > 0) {
		size_t n = strnlen(strings, len);
		ctp_jsonw_strn(w, strings, n);
		pos = n + 1;
	} else {
		ctp_jsonw_null(w);
	}
	CTP_JSONW_LIT(w, ",\"argv\":[");
	for (uint32_t i = 0; i < argc && pos < len; i++) {
		if (i)
			CTP_JSONW_LIT(w, ",");
		size_t n = strnlen(strings + pos, len - pos);
		ctp_jsonw_strn(w, strings + pos, n);
		pos += n + 1;
	}
	CTP_JSONW_LIT(w, "]");
	CTP_JSONW_LIT(w, ",\"stack_depth\":");
	if (stack_depth >= 0)
		ctp_jsonw_u64(w, (uint64_t)stack_depth);
	else
		ctp_jsonw_null(w);
	end_line(e);
	e->processes++;
}

void ctp_emit_coro(struct ctp_emitter *e, const struct ctp_coro_line *l)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"coro\",\"pid\":");
	ctp_jsonw_u64(w, l->pid);
	CTP_JSONW_LIT(w, ",\"coro\":");
	ctp_jsonw_u64(w, l->coro);
	CTP_JSONW_LIT(w, ",\"kind\":");
	ctp_jsonw_str(w, ctp_name_of(&ctp_kind_names, l->kind));
	CTP_JSONW_LIT(w, ",\"entry\":");
	ctp_jsonw_str(w, l->entry);
	CTP_JSONW_LIT(w, ",\"entry_addr\":");
	if (l->entry_addr)
		ctp_jsonw_hex(w, l->entry_addr);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"parent\":");
	u64_or_null(w, l->parent);
	CTP_JSONW_LIT(w, ",\"tid\":");
	u64_or_null(w, l->tid);
	CTP_JSONW_LIT(w, ",\"ts\":");
	u64_if(w, l->has_ts, l->ts);
	CTP_JSONW_LIT(w, ",\"stack\":");
	u64_or_null(w, l->stack);
	end_line(e);
	if (l->kind == CTP_KIND_THREAD)
		e->threads++;
	else
		e->coros++;
}

static void make_switch_head(struct ctp_switch_head *head, uint32_t pid, uint32_t tid)
{
	head->len =
		(uint8_t)snprintf(head->text, sizeof(head->text),
				  "{\"type\":\"switch\",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	head->pid = pid;
	head->tid = tid;
}

/* Writes a switch line's rest from `,"from":` on at p, and returns its end. */
static char *write_switch_tail(struct ctp_emitter *e, char *p, uint64_t from, uint64_t to,
			       uint32_t how, uint32_t stack)
{
	struct ctp_jsonw *w = e->text;
	memcpy(p, ",\"from\":", 8);
	p = ctp_jsonw_put_u64(w, p + 8, from);
	memcpy(p, ",\"to\":", 6);
	p = ctp_jsonw_put_u64(w, p + 6, to);
	memcpy(p, e->how_json[how], sizeof(e->how_json[how]));
	p += e->how_len[how];
	if (stack) {
		p = ctp_jsonw_put_u64(w, p, stack);
	} else {
		memcpy(p, "null", 4);
		p += 4;
	}
	memcpy(p, "}\n", 2);
	return p + 2;
}

void ctp_emit_switch(struct ctp_emitter *e, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t from,
		     uint64_t to, uint32_t how, uint32_t stack)
{
	struct ctp_jsonw *w = begin_line(e);
	/* The longest switch line is about 190 bytes, and the cached fragments and the numbers
	 * below are stored whole: reserve once for all of it, and write through a cursor. */
	ctp_jsonw_reserve(w, 320);
	struct ctp_switch_head *head = &e->switch_heads[tid & (CTP_EMIT_SWITCH_HEADS - 1)];
	if (head->len == 0 || head->pid != pid || head->tid != tid)
		make_switch_head(head, pid, tid);
	/* The cached fragments are copied at their buffers' full, fixed size (what lies past their
	 * length is overwritten next): a copy of a length known only at run time is a `rep movs`,
	 * whose start-up alone costs more than the rest of the line. */
	char *p = w->buf + w->len;
	memcpy(p, head->text, sizeof(head->text));
	p = ctp_jsonw_put_u64(w, p + head->len, ts);
	if (how >= CTP_EMIT_HOW_COUNT)
		how = 0;
	uint64_t how_stack = (uint64_t)stack << 32 | how;
	uint64_t hash = from * 0x9E3779B97F4A7C15ull + to * 0xC2B2AE3D27D4EB4Full +
			how_stack * 0x165667B19E3779F9ull;
	struct ctp_switch_tail *tail = &e->switch_tails[hash >> (64 - CTP_EMIT_SWITCH_TAIL_BITS)];
	if (tail->len && tail->from == from && tail->to == to && tail->how_stack == how_stack) {
		memcpy(p, tail->text, sizeof(tail->text));
		p += tail->len;
	} else {
		char *end = write_switch_tail(e, p, from, to, how, stack);
		size_t len = (size_t)(end - p);
		if (len <= sizeof(tail->text)) {
			memcpy(tail->text, p, len);
			tail->from = from;
			tail->to = to;
			tail->how_stack = how_stack;
			tail->len = (uint8_t)len;
		}
		p = end;
	}
	w->len = (size_t)(p - w->buf);
	ctp_zwriter_lines_added(e->z, e->line_start, 1);
	e->switches++;
}

void ctp_emit_module(struct ctp_emitter *e, uint32_t pid, const struct ctp_module_copy *m)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"module\",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"path\":");
	ctp_jsonw_str(w, m->path);
	CTP_JSONW_LIT(w, ",\"build_id\":");
	if (m->build_id_len) {
		char hex[2 * CTP_BUILD_ID_MAX + 1];
		for (uint32_t i = 0; i < m->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
		ctp_jsonw_str(w, hex);
	} else {
		ctp_jsonw_null(w);
	}
	CTP_JSONW_LIT(w, ",\"bias\":");
	ctp_jsonw_hex(w, m->base);
	CTP_JSONW_LIT(w, ",\"lo\":");
	ctp_jsonw_hex(w, m->lo);
	CTP_JSONW_LIT(w, ",\"hi\":");
	ctp_jsonw_hex(w, m->hi);
	end_line(e);
}

void ctp_emit_stack(struct ctp_emitter *e, uint32_t pid, uint32_t id, bool reaches_start,
		    const uint64_t *frames, const struct ctp_sym *const *syms, uint32_t n)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"stack\",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"id\":");
	ctp_jsonw_u64(w, id);
	CTP_JSONW_LIT(w, ",\"frames\":[");
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			CTP_JSONW_LIT(w, ",");
		ctp_emit_frame_json(w, frames[i], syms[i]);
	}
	CTP_JSONW_LIT(w, "]");
	if (reaches_start)
		CTP_JSONW_LIT(w, ",\"reaches_start\":true");
	end_line(e);
}

void ctp_emit_frame_json(struct ctp_jsonw *w, uint64_t addr, const struct ctp_sym *s)
{
	CTP_JSONW_LIT(w, "{\"addr\":");
	ctp_jsonw_hex(w, addr);
	CTP_JSONW_LIT(w, ",\"sym\":");
	ctp_jsonw_str(w, s->sym);
	CTP_JSONW_LIT(w, ",\"off\":");
	if (s->sym)
		ctp_jsonw_u64(w, s->off);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, ",\"module\":");
	ctp_jsonw_str(w, s->module);
	CTP_JSONW_LIT(w, ",\"file\":");
	ctp_jsonw_str(w, s->file);
	CTP_JSONW_LIT(w, ",\"line\":");
	if (s->line > 0)
		ctp_jsonw_u64(w, (uint64_t)s->line);
	else
		ctp_jsonw_null(w);
	CTP_JSONW_LIT(w, "}");
}

void ctp_emit_loss(struct ctp_emitter *e, uint32_t pid, uint32_t tid, uint64_t count,
		   const char *why)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"loss\",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"tid\":");
	u64_or_null(w, tid);
	CTP_JSONW_LIT(w, ",\"count\":");
	ctp_jsonw_u64(w, count);
	if (why) {
		CTP_JSONW_LIT(w, ",\"why\":");
		ctp_jsonw_str(w, why);
	}
	end_line(e);
	e->lost += count;
}

void ctp_emit_state(struct ctp_emitter *e, const struct ctp_state_line *l)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"state\",\"pid\":");
	ctp_jsonw_u64(w, l->pid);
	CTP_JSONW_LIT(w, ",\"coro\":");
	ctp_jsonw_u64(w, l->coro);
	CTP_JSONW_LIT(w, ",\"state\":");
	ctp_jsonw_str(w, ctp_name_of(&ctp_state_names, l->state));
	CTP_JSONW_LIT(w, ",\"tid\":");
	u64_or_null(w, l->tid);
	CTP_JSONW_LIT(w, ",\"since\":");
	u64_if(w, l->has_since, l->since);
	CTP_JSONW_LIT(w, ",\"stack\":");
	u64_or_null(w, l->stack);
	CTP_JSONW_LIT(w, ",\"switches\":");
	ctp_jsonw_u64(w, l->switches);
	/* A wait the coroutine was resumed from since is over (CTP.md "Stations"). */
	if (ctp_wait_current(l->wait_fd, l->wait_op, l->switches)) {
		CTP_JSONW_LIT(w, ",\"wait\":{\"fd\":");
		ctp_jsonw_u64(w, (uint64_t)l->wait_fd);
		CTP_JSONW_LIT(w, ",\"op\":");
		ctp_jsonw_str(w, ctp_name_of(&ctp_op_names, l->wait_op & CTP_WAIT_OP_MASK));
		if (l->wait_op & CTP_WAIT_CLOSED)
			CTP_JSONW_LIT(w, ",\"closed\":true}");
		else
			CTP_JSONW_LIT(w, ",\"closed\":false}");
	}
	end_line(e);
}

void ctp_emit_fd(struct ctp_emitter *e, const struct ctp_fd_line *l)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"fd\",\"pid\":");
	ctp_jsonw_u64(w, l->pid);
	CTP_JSONW_LIT(w, ",\"tid\":");
	u64_or_null(w, l->tid);
	CTP_JSONW_LIT(w, ",\"ts\":");
	ctp_jsonw_u64(w, l->ts);
	CTP_JSONW_LIT(w, ",\"coro\":");
	ctp_jsonw_u64(w, l->coro);
	CTP_JSONW_LIT(w, ",\"fd\":");
	ctp_jsonw_i64(w, l->fd);
	CTP_JSONW_LIT(w, ",\"event\":");
	ctp_jsonw_str(w, ctp_name_of(&ctp_fd_event_names, l->event));
	CTP_JSONW_LIT(w, ",\"op\":");
	ctp_jsonw_str(w, ctp_name_of(&ctp_op_names, l->op));
	CTP_JSONW_LIT(w, ",\"waiter\":");
	u64_or_null(w, l->waiter);
	if (l->epfd >= 0) {
		CTP_JSONW_LIT(w, ",\"epfd\":");
		ctp_jsonw_i64(w, l->epfd);
	}
	CTP_JSONW_LIT(w, ",\"stack\":");
	u64_or_null(w, l->stack);
	end_line(e);
}

void ctp_emit_exit(struct ctp_emitter *e, const struct ctp_exit_line *l)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"exit\",\"pid\":");
	ctp_jsonw_u64(w, l->pid);
	if (l->ts) {
		CTP_JSONW_LIT(w, ",\"ts\":");
		ctp_jsonw_u64(w, l->ts);
	}
	switch (l->how) {
	case CTP_EXITED_UNKNOWN:
		CTP_JSONW_LIT(w, ",\"status\":null");
		break;
	case CTP_EXITED_STATUS:
		CTP_JSONW_LIT(w, ",\"status\":");
		ctp_jsonw_i64(w, l->value);
		break;
	case CTP_EXITED_SIGNAL:
		CTP_JSONW_LIT(w, ",\"signal\":");
		ctp_jsonw_i64(w, l->value);
		if (l->tid) {
			CTP_JSONW_LIT(w, ",\"tid\":");
			ctp_jsonw_u64(w, l->tid);
		}
		if (l->coro) {
			CTP_JSONW_LIT(w, ",\"coro\":");
			ctp_jsonw_u64(w, l->coro);
		} else if (l->nrunning == 1) {
			CTP_JSONW_LIT(w, ",\"coro\":");
			ctp_jsonw_u64(w, l->running[0]);
		} else if (l->nrunning > 1) {
			/* Several threads were running a coroutine: which one crashed is unknown.
			 */
			CTP_JSONW_LIT(w, ",\"running\":[");
			for (size_t i = 0; i < l->nrunning; i++) {
				if (i)
					CTP_JSONW_LIT(w, ",");
				ctp_jsonw_u64(w, l->running[i]);
			}
			CTP_JSONW_LIT(w, "]");
		}
		if (l->stack) {
			CTP_JSONW_LIT(w, ",\"stack\":");
			ctp_jsonw_u64(w, l->stack);
		}
		if (l->addr) {
			CTP_JSONW_LIT(w, ",\"addr\":");
			ctp_jsonw_hex(w, l->addr);
		}
		break;
	}
	end_line(e);
}

void ctp_emit_coro_end(struct ctp_emitter *e, const struct ctp_coro_end_line *l)
{
	struct ctp_jsonw *w = begin_line(e);
	CTP_JSONW_LIT(w, "{\"type\":\"coro_end\",\"pid\":");
	ctp_jsonw_u64(w, l->pid);
	CTP_JSONW_LIT(w, ",\"coro\":");
	ctp_jsonw_u64(w, l->coro);
	CTP_JSONW_LIT(w, ",\"tid\":");
	u64_or_null(w, l->tid);
	CTP_JSONW_LIT(w, ",\"ts\":");
	u64_if(w, l->has_ts, l->ts);
	CTP_JSONW_LIT(w, ",\"how\":");
	ctp_jsonw_str(w, ctp_name_of(&ctp_end_how_names, l->how));
	if (l->how == CTP_END_ENDED) {
		CTP_JSONW_LIT(w, ",\"switch\":");
		ctp_jsonw_str(w, ctp_name_of(&ctp_switch_how_names, l->switch_how));
	}
	end_line(e);
}

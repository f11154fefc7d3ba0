/* The one place that reads a trace line's fields (from the reader's flat scan or jansson tree):
 * each field by its name in docs/trace-format.md, into struct ctp_event. A field of the wrong JSON
 * type counts as absent, as a reader of a format that grows must treat it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cat/model/event.h"
#include "cat/model/grow.h"
#include "ctp/segment.h"

void ctp_event_decoder_init(struct ctp_event_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

void ctp_event_decoder_free(struct ctp_event_decoder *d)
{
	ctp_strings_free(&d->strings);
	ctp_idmap_free(&d->ended_v1);
	json_decref(d->unknown_json);
	free(d->scratch);
	free(d->frames);
	free(d->argv);
	free(d->running);
	memset(d, 0, sizeof(*d));
}

/* ---- fields ----
 * A line's object is either a flat line (cat/reader/flat_line.h: most lines) or a jansson
 * tree; these getters read a field the same way from both, so that the two parses cannot
 * disagree. Nested values (a state's `wait`, arrays) only exist in trees. */

struct obj {
	const struct ctp_flat_line *flat;
	const json_t *json;
};

/* An integer field: false when absent or not an integer. */
static bool get_int(struct obj o, const char *key, int64_t *out)
{
	if (o.flat) {
		const struct ctp_flat_field *f = ctp_flat_get(o.flat, key);
		if (!f || f->kind != CTP_FLAT_INT)
			return false;
		*out = f->num;
		return true;
	}
	json_t *v = json_object_get(o.json, key);
	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return true;
}

/* A string field's bytes (not NUL-terminated for a flat line): NULL when absent or not a
 * string. */
static const char *get_bytes(struct obj o, const char *key, size_t *len)
{
	if (o.flat) {
		const struct ctp_flat_field *f = ctp_flat_get(o.flat, key);
		if (!f || f->kind != CTP_FLAT_STRING)
			return NULL;
		*len = f->str_len;
		return f->str;
	}
	json_t *v = json_object_get(o.json, key);
	if (!json_is_string(v))
		return NULL;
	*len = json_string_length(v);
	return json_string_value(v);
}

static bool get_u64(struct obj o, const char *key, uint64_t *out)
{
	int64_t v;
	if (!get_int(o, key, &v) || v < 0)
		return false;
	*out = (uint64_t)v;
	return true;
}

/* A number whose 0 means unknown in a trace (ids, times): 0 when absent. */
static uint64_t u64_or_0(struct obj o, const char *key)
{
	uint64_t v = 0;
	get_u64(o, key, &v);
	return v;
}

static uint32_t u32_or_0(struct obj o, const char *key)
{
	uint64_t v = u64_or_0(o, key);
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* A string valid until the next line: a tree's own, or a flat line's copied NUL-terminated
 * into the decoder's scratch (sized for the whole line at its start). */
static const char *get_str(struct ctp_event_decoder *d, struct obj o, const char *key)
{
	size_t len;
	const char *s = get_bytes(o, key, &len);
	if (!s || !o.flat)
		return s;
	if (d->scratch_used + len + 1 > d->cap_scratch)
		return NULL; /* not reached: the scratch holds the whole line */
	char *copy = d->scratch + d->scratch_used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	d->scratch_used += len + 1;
	return copy;
}

/* "0x..." addresses. strtoull stops at the '"' after a flat line's string. */
static uint64_t hex_or_0(struct obj o, const char *key)
{
	size_t len;
	const char *s = get_bytes(o, key, &len);
	return s ? strtoull(s, NULL, 16) : 0;
}

/* A string the decoder keeps (interned). *oom set when it could not. */
static const char *keep(struct ctp_event_decoder *d, struct obj o, const char *key, bool *oom)
{
	size_t len;
	const char *s = get_bytes(o, key, &len);
	if (!s)
		return NULL;
	const char *kept = ctp_strings_intern(&d->strings, s, len);
	if (!kept)
		*oom = true;
	return kept;
}

/* An enum's word: its value through the contract's table, and the word itself (the table's
 * static copy when known, else interned so that a newer trace's word still shows). */
static uint32_t word(struct ctp_event_decoder *d, struct obj o, const char *key,
		     const struct ctp_name_table *t, const char **name, bool *oom)
{
	size_t len;
	const char *s = get_bytes(o, key, &len);
	*name = NULL;
	if (!s)
		return 0;
	uint32_t value = ctp_name_find(t, s, len, 0);
	*name = value ? ctp_name_of(t, value) : keep(d, o, key, oom);
	return value;
}

static struct obj tree(const json_t *j)
{
	return (struct obj){.json = j};
}

/* ---- line types ---- */

static const struct {
	const char *name;
	enum ctp_event_type type;
} line_types[] = {
	{"switch", CTP_EV_SWITCH}, {"fd", CTP_EV_FD},		{"stack", CTP_EV_STACK},
	{"coro", CTP_EV_CORO},	   {"state", CTP_EV_STATE},	{"coro_end", CTP_EV_CORO_END},
	{"loss", CTP_EV_LOSS},	   {"process", CTP_EV_PROCESS}, {"exit", CTP_EV_EXIT},
	{"trace", CTP_EV_TRACE},   {"end", CTP_EV_END},		{"snapshot", CTP_EV_SNAPSHOT},
	{"module", CTP_EV_MODULE},
};

static void decode_trace(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j)
{
	uint64_t v;
	ev->trace.version = get_u64(j, "version", &v) && v < 1000 ? (int)v : 0;
	ev->trace.tool = get_str(d, j, "tool");
	ev->trace.start = u64_or_0(j, "start");
}

static int decode_process(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j,
			  bool *oom)
{
	uint64_t v;
	ev->process.has_ppid = get_u64(j, "ppid", &v) && v <= UINT32_MAX;
	ev->process.ppid = ev->process.has_ppid ? (uint32_t)v : 0;
	ev->process.exe = keep(d, j, "exe", oom);
	ev->process.stack_depth = get_u64(j, "stack_depth", &v) && v < 1024 ? (int)v : -1;
	json_t *argv = j.json ? json_object_get(j.json, "argv") : NULL;
	size_t n = json_is_array(argv) ? json_array_size(argv) : 0;
	if (CTP_GROW(d->argv, d->cap_argv, n + 1) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(argv, i));
		d->argv[i] = s ? s : NULL;
	}
	d->argv[n] = NULL;
	ev->process.argv = (const char *const *)d->argv;
	ev->process.argc = n;
	return 0;
}

static void decode_coro(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j, bool *oom)
{
	ev->coro_line.kind = word(d, j, "kind", &ctp_kind_names, &ev->coro_line.kind_name, oom);
	ev->coro_line.entry = keep(d, j, "entry", oom);
	ev->coro_line.entry_addr = hex_or_0(j, "entry_addr");
	if (!ev->coro_line.entry && d->namer)
		ev->coro_line.entry =
			d->namer->entry(d->namer_state, ev->pid, ev->coro_line.entry_addr);
	ev->coro_line.parent = u64_or_0(j, "parent");
}

static int decode_stack(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j, bool *oom)
{
	ev->stack_line.id = u32_or_0(j, "id");
	json_t *frames = j.json ? json_object_get(j.json, "frames") : NULL;
	size_t n = json_is_array(frames) ? json_array_size(frames) : 0;
	if (CTP_GROW(d->frames, d->cap_frames, n ? n : 1) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct obj f = tree(json_array_get(frames, i));
		struct ctp_event_frame *fr = &d->frames[i];
		fr->addr = hex_or_0(f, "addr");
		fr->has_off = get_u64(f, "off", &fr->off);
		if (!fr->has_off)
			fr->off = 0;
		fr->line = (int)u32_or_0(f, "line");
		fr->sym = keep(d, f, "sym", oom);
		fr->module = keep(d, f, "module", oom);
		fr->file = keep(d, f, "file", oom);
		fr->has_module_off = false;
		fr->module_off = 0;
		if (!fr->sym && d->namer)
			d->namer->frame(d->namer_state, ev->pid, fr);
	}
	ev->stack_line.nframes = n;
	ev->stack_line.frames = d->frames;
	ev->stack_line.reaches_start =
		j.json && json_is_true(json_object_get(j.json, "reaches_start"));
	return 0;
}

static int decode_module(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j, bool *oom)
{
	ev->module_line.path = keep(d, j, "path", oom);
	ev->module_line.build_id = keep(d, j, "build_id", oom);
	ev->module_line.bias = hex_or_0(j, "bias");
	ev->module_line.lo = hex_or_0(j, "lo");
	ev->module_line.hi = hex_or_0(j, "hi");
	return *oom || !d->namer ? 0 : d->namer->module(d->namer_state, ev);
}

static void decode_fd(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j, bool *oom)
{
	uint64_t v;
	ev->fd.fd = get_u64(j, "fd", &v) && v <= INT32_MAX ? (int)v : -1;
	ev->fd.event = word(d, j, "event", &ctp_fd_event_names, &ev->fd.event_name, oom);
	ev->fd.op = word(d, j, "op", &ctp_op_names, &ev->fd.op_name, oom);
	ev->fd.waiter = u64_or_0(j, "waiter");
	int64_t epfd;
	ev->fd.epfd = get_int(j, "epfd", &epfd) ? epfd : -1;
}

static void decode_state(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j, bool *oom)
{
	ev->state.state = word(d, j, "state", &ctp_state_names, &ev->state.state_name, oom);
	ev->state.since = u64_or_0(j, "since");
	ev->state.has_switches = get_u64(j, "switches", &ev->state.switches);
	if (!ev->state.has_switches)
		ev->state.switches = 0;
	ev->state.wait_fd = -1;
	ev->state.wait_closed = -1;
	/* What it waits on: {"wait": {"fd", "op", "closed"}}, or the flat fields of early traces.
	 */
	json_t *wait = j.json ? json_object_get(j.json, "wait") : NULL;
	uint64_t fd;
	struct obj holder = {0};
	bool waits = false;
	const char *fd_key = "fd", *op_key = "op";
	if (json_is_object(wait) && get_u64(tree(wait), "fd", &fd)) {
		holder = tree(wait);
		waits = true;
		json_t *closed = json_object_get(wait, "closed");
		ev->state.wait_closed = json_is_boolean(closed) ? json_is_true(closed) : -1;
	} else if (get_u64(j, "wait_fd", &fd)) {
		holder = j;
		waits = true;
		fd_key = "wait_fd";
		op_key = "wait_op";
	}
	if (waits && fd <= INT32_MAX) {
		(void)fd_key;
		ev->state.wait_fd = (int)fd;
		ev->state.wait_op =
			word(d, holder, op_key, &ctp_op_names, &ev->state.wait_op_name, oom);
	}
}

static void decode_coro_end(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j,
			    bool *oom)
{
	ev->coro_end.how = word(d, j, "how", &ctp_end_how_names, &ev->coro_end.how_name, oom);
	ev->coro_end.switch_how =
		word(d, j, "switch", &ctp_switch_how_names, &ev->coro_end.switch_name, oom);
}

static int decode_exit(struct ctp_event_decoder *d, struct ctp_event *ev, struct obj j)
{
	int64_t v;
	if (get_int(j, "signal", &v)) {
		ev->exit.kind = CTP_EXIT_LINE_SIGNAL;
		ev->exit.value = (int)v;
	} else if (get_int(j, "status", &v)) {
		ev->exit.kind = CTP_EXIT_LINE_STATUS;
		ev->exit.value = (int)v;
	}
	ev->exit.addr = hex_or_0(j, "addr");
	json_t *running = j.json ? json_object_get(j.json, "running") : NULL;
	size_t n = json_is_array(running) ? json_array_size(running) : 0;
	if (CTP_GROW(d->running, d->cap_running, n ? n : 1) < 0)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_array_get(running, i);
		if (json_is_integer(v) && json_integer_value(v) > 0)
			d->running[k++] = (uint64_t)json_integer_value(v);
	}
	ev->exit.running = d->running;
	ev->exit.nrunning = k;
	return 0;
}

static void decode_end(struct ctp_event *ev, struct obj j)
{
	ev->end.has_lines = get_u64(j, "lines", &ev->end.lines);
	if (!ev->end.has_lines)
		ev->end.lines = 0;
	ev->end.lost = u64_or_0(j, "lost");
	ev->end.unwritten = u64_or_0(j, "unwritten");
}

/* Format 1 leaves a coroutine's end to be guessed; derive it here, once, as format 2 writes it:
 * `returned` before the `return` switch that leaves it, and for a final state `exited` with no
 * end before it, `unknown` at the state's `since`. */
static int derive_v1_end(struct ctp_event_decoder *d, const struct ctp_event *ev)
{
	uint64_t coro = 0, ts = 0;
	uint32_t how = CTP_END_UNKNOWN;
	if (ev->type == CTP_EV_SWITCH && ev->sw.how == CTP_HOW_RETURN && ev->sw.from) {
		coro = ev->sw.from;
		ts = ev->ts;
		how = CTP_END_RETURNED;
	} else if (ev->type == CTP_EV_STATE && ev->state.state == CTP_STATE_EXITED && ev->coro) {
		coro = ev->coro;
		ts = ev->state.since;
	} else {
		return 0;
	}
	if (ctp_idmap_get(&d->ended_v1, ev->pid, coro) != CTP_IDMAP_NONE)
		return 0;
	if (ctp_idmap_put(&d->ended_v1, ev->pid, coro, 1) < 0)
		return -1;
	struct ctp_event *e = &d->derived;
	memset(e, 0, sizeof(*e));
	e->type = CTP_EV_CORO_END;
	e->type_name = "coro_end";
	e->pid = ev->pid;
	e->tid = ev->tid;
	e->ts = ts;
	e->coro = coro;
	e->coro_end.how = how;
	e->coro_end.how_name = ctp_name_of(&ctp_end_how_names, how);
	d->have_derived = true;
	return 0;
}

int ctp_event_decode(struct ctp_event_decoder *d, const struct ctp_trace_line *line,
		     struct ctp_event *ev)
{
	struct obj j = {.flat = line->flat, .json = line->json};
	memset(ev, 0, sizeof(*ev));
	d->have_derived = false;
	json_decref(d->unknown_json);
	d->unknown_json = NULL;
	d->scratch_used = 0;
	if (j.flat && CTP_GROW(d->scratch, d->cap_scratch, line->len + CTP_FLAT_MAX_FIELDS) < 0) {
		errno = ENOMEM;
		return -1;
	}
	ev->line = line;
	size_t type_len = 0;
	const char *type = get_bytes(j, "type", &type_len);
	for (size_t i = 0; type && i < sizeof(line_types) / sizeof(line_types[0]); i++) {
		if (strlen(line_types[i].name) == type_len &&
		    memcmp(type, line_types[i].name, type_len) == 0) {
			ev->type = line_types[i].type;
			ev->type_name = line_types[i].name;
			break;
		}
	}
	if (ev->type == CTP_EV_UNKNOWN) {
		ev->type_name = type ? get_str(d, j, "type") : "";
		/* Only those who show an unknown line whole need its tree: parse a flat one. */
		ev->json = j.json ? j.json : (d->unknown_json = ctp_trace_line_json(line));
	}
	ev->pid = u32_or_0(j, "pid");
	ev->tid = u32_or_0(j, "tid");
	ev->ts = u64_or_0(j, "ts");
	ev->coro = u64_or_0(j, "coro");
	ev->stack = u32_or_0(j, "stack");
	bool oom = false;
	int rc = 0;
	switch (ev->type) {
	case CTP_EV_TRACE:
		decode_trace(d, ev, j);
		d->version = ev->trace.version;
		break;
	case CTP_EV_PROCESS:
		rc = decode_process(d, ev, j, &oom);
		break;
	case CTP_EV_CORO:
		decode_coro(d, ev, j, &oom);
		break;
	case CTP_EV_SWITCH:
		ev->sw.from = u64_or_0(j, "from");
		ev->sw.to = u64_or_0(j, "to");
		ev->sw.how = word(d, j, "how", &ctp_switch_how_names, &ev->sw.how_name, &oom);
		break;
	case CTP_EV_STACK:
		rc = decode_stack(d, ev, j, &oom);
		break;
	case CTP_EV_LOSS:
		ev->loss.has_count = get_u64(j, "count", &ev->loss.count);
		if (!ev->loss.has_count)
			ev->loss.count = 0;
		ev->loss.why = get_str(d, j, "why");
		break;
	case CTP_EV_FD:
		decode_fd(d, ev, j, &oom);
		break;
	case CTP_EV_STATE:
		decode_state(d, ev, j, &oom);
		break;
	case CTP_EV_CORO_END:
		decode_coro_end(d, ev, j, &oom);
		break;
	case CTP_EV_EXIT:
		rc = decode_exit(d, ev, j);
		break;
	case CTP_EV_END:
		decode_end(ev, j);
		break;
	case CTP_EV_MODULE:
		rc = decode_module(d, ev, j, &oom);
		break;
	case CTP_EV_SNAPSHOT:
		ev->snapshot.has_states = get_u64(j, "states", &ev->snapshot.states);
		if (!ev->snapshot.has_states)
			ev->snapshot.states = 0;
		break;
	case CTP_EV_UNKNOWN:
		break;
	}
	if (rc == 0 && !oom && d->version == 1)
		rc = derive_v1_end(d, ev);
	if (rc < 0 || oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

const struct ctp_event *ctp_event_derived(struct ctp_event_decoder *d)
{
	return d->have_derived ? &d->derived : NULL;
}

size_t ctp_event_coros(const struct ctp_event *ev, uint64_t ids[5])
{
	size_t n = 0;
	uint64_t all[5] = {ev->coro, ev->sw.from, ev->sw.to, ev->coro_line.parent, ev->fd.waiter};
	for (size_t i = 0; i < 5; i++)
		if (all[i])
			ids[n++] = all[i];
	return n;
}

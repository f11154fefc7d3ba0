/* The filter stage: judges each event, holds definitions back until something kept refers to
 * them. Held definitions are kept as the text of their line and decoded again when they are
 * written: that happens at most once per definition, and most filtered views write few. */
#include "cat/outputs/filter.h"
#include "cat/model/resymbolize.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/model/grow.h"

int ctp_cat_ids_add(struct ctp_cat_ids *ids, const char *list)
{
	const char *p = list;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno || (*end != ',' && *end != '\0'))
			return -1;
		uint64_t *grown = realloc(ids->v, (ids->n + 1) * sizeof(*ids->v));
		if (!grown)
			return -1;
		ids->v = grown;
		ids->v[ids->n++] = v;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

int ctp_cat_filter_add_types(struct ctp_cat_filter_spec *spec, const char *list)
{
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		if (len == 0)
			return -1;
		for (size_t i = 0; i < len; i++)
			if (!islower((unsigned char)p[i]) && p[i] != '_')
				return -1;
		char **grown = realloc(spec->types, (spec->ntypes + 1) * sizeof(*spec->types));
		if (!grown)
			return -1;
		spec->types = grown;
		spec->types[spec->ntypes] = strndup(p, len);
		if (!spec->types[spec->ntypes])
			return -1;
		spec->ntypes++;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

bool ctp_cat_filter_active(const struct ctp_cat_filter_spec *spec)
{
	return spec->pids.n || spec->coros.n || spec->tids.n || spec->ntypes || spec->has_since ||
	       spec->has_until;
}

void ctp_cat_filter_spec_free(struct ctp_cat_filter_spec *spec)
{
	free(spec->pids.v);
	free(spec->coros.v);
	free(spec->tids.v);
	for (size_t i = 0; i < spec->ntypes; i++)
		free(spec->types[i]);
	free(spec->types);
	memset(spec, 0, sizeof(*spec));
}

/* A definition held back until a kept line refers to it (or already written). */
struct held {
	char *text; /* the line, NULL once written */
	size_t len;
};

enum def_kind { DEF_PROCESS = 1, DEF_CORO = 2, DEF_STACK = 3 };

struct filter {
	const struct ctp_cat_filter_spec *spec;
	struct ctp_cat_output inner;
	/* (pid, def_id()) -> held[]: definitions held back or written. */
	struct ctp_idmap def_index;
	struct held *held;
	size_t nheld, cap_held;
	/* Held definitions are decoded again when written (at most once each). */
	struct ctp_event_decoder decoder;
	struct ctp_resym *resym; /* names the trace left out, for what passes */
	uint64_t since, until;	 /* resolved at the header */
	uint64_t written;	 /* lines passed on */
};

enum verdict {
	KEEP,	/* every active filter judged the line and agreed */
	PASS,	/* no filter that judged it disagreed, but some could not judge it */
	REJECT, /* a filter that judged it disagreed */
};

static bool ids_have(const struct ctp_cat_ids *ids, uint64_t v)
{
	for (size_t i = 0; i < ids->n; i++)
		if (ids->v[i] == v)
			return true;
	return false;
}

/* One filter's judgement folded into the verdict so far. */
static void fold(enum verdict *v, bool judged, bool agrees)
{
	if (!judged) {
		if (*v == KEEP)
			*v = PASS;
	} else if (!agrees) {
		*v = REJECT;
	}
}

static enum verdict judge(const struct filter *f, const struct ctp_event *ev)
{
	const struct ctp_cat_filter_spec *s = f->spec;
	enum verdict v = KEEP;
	if (s->ntypes) {
		bool listed = false;
		for (size_t i = 0; i < s->ntypes && !listed; i++)
			listed = strcmp(s->types[i], ev->type_name) == 0;
		fold(&v, true, listed);
	}
	if (s->pids.n)
		fold(&v, ev->pid != 0, ev->pid && ids_have(&s->pids, ev->pid));
	if (s->tids.n)
		fold(&v, ev->tid != 0, ev->tid && ids_have(&s->tids, ev->tid));
	if (s->coros.n) {
		/* `waiter`: an fd event that concerns the coroutine waiting on the fd. */
		const uint64_t ids[] = {ev->coro, ev->sw.from, ev->sw.to, ev->fd.waiter};
		bool has = false, match = false;
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			if (ids[i]) {
				has = true;
				match = match || ids_have(&s->coros, ids[i]);
			}
		}
		fold(&v, has, match);
	}
	if (s->has_since || s->has_until)
		fold(&v, ev->ts != 0, ev->ts && ev->ts >= f->since && ev->ts <= f->until);
	return v;
}

/* The second key of a definition in a process's part of the table: the process itself is 0,
 * a coroutine its id (never 0, below 2^63: the decoder takes no negative JSON integer), a stack
 * its id with the top bit set. */
static uint64_t def_id(enum def_kind kind, uint64_t id)
{
	switch (kind) {
	case DEF_PROCESS:
		return 0;
	case DEF_CORO:
		return id;
	case DEF_STACK:
		return 1ull << 63 | id;
	}
	return 0;
}

/* The definition an event makes: false for events that define nothing. */
static bool def_of(const struct ctp_event *ev, uint32_t *a, uint64_t *b)
{
	if (!ev->pid || !ev->line)
		return false;
	*a = ev->pid;
	switch (ev->type) {
	case CTP_EV_PROCESS:
		*b = def_id(DEF_PROCESS, 0);
		return true;
	case CTP_EV_CORO:
		*b = def_id(DEF_CORO, ev->coro);
		return ev->coro != 0;
	case CTP_EV_STACK:
		*b = def_id(DEF_STACK, ev->stack_line.id);
		return ev->stack_line.id != 0;
	default:
		return false;
	}
}

/* Records the definition (a, b) as held with `text`, or as written (text NULL). */
static int set_def(struct filter *f, uint32_t a, uint64_t b, const char *text, size_t len)
{
	uint32_t at = ctp_idmap_get(&f->def_index, a, b);
	if (at == CTP_IDMAP_NONE) {
		if (CTP_GROW(f->held, f->cap_held, f->nheld + 1) < 0 ||
		    ctp_idmap_put(&f->def_index, a, b, (uint32_t)f->nheld) < 0)
			return -1;
		at = (uint32_t)f->nheld++;
		f->held[at] = (struct held){0};
	}
	struct held *h = &f->held[at];
	free(h->text);
	h->text = NULL;
	h->len = len;
	if (text && !(h->text = strndup(text, len)))
		return -1;
	return 0;
}

static int write_event(struct filter *f, const struct ctp_event *ev);

/* Writes the held definition (a, b) if there is one not yet written. */
static int write_def(struct filter *f, uint32_t a, uint64_t b)
{
	uint32_t at = ctp_idmap_get(&f->def_index, a, b);
	if (at == CTP_IDMAP_NONE || !f->held[at].text)
		return 0;
	/* Take the text before marking the definition written. */
	struct ctp_trace_line line = {.text = f->held[at].text, .len = f->held[at].len};
	f->held[at].text = NULL;
	line.json = json_loadb(line.text, line.len, JSON_ALLOW_NUL, NULL);
	int rc = 0;
	struct ctp_event ev;
	if (line.json) {
		rc = ctp_event_decode(&f->decoder, &line, &ev);
		if (rc == 0)
			rc = write_event(f, &ev);
	}
	json_decref(line.json);
	free((char *)line.text);
	return rc;
}

/* Writes the definitions `ev` refers to, then the event. */
static int write_event(struct filter *f, const struct ctp_event *ev)
{
	if (ev->pid) {
		uint32_t pid = ev->pid;
		if (ev->type != CTP_EV_PROCESS && write_def(f, pid, def_id(DEF_PROCESS, 0)) < 0)
			return -1;
		uint64_t ids[5];
		size_t n = ctp_event_coros(ev, ids);
		for (size_t i = 0; i < n; i++)
			if (write_def(f, pid, def_id(DEF_CORO, ids[i])) < 0)
				return -1;
		if (ev->stack && write_def(f, pid, def_id(DEF_STACK, ev->stack)) < 0)
			return -1;
	}
	if (f->inner.event(f->inner.state, ev) < 0)
		return -1;
	if (ev->line)
		f->written++;
	return 0;
}

/* The `end` line counts the lines before it: say how many this view has, not the original. */
static int write_end_line(struct filter *f, const struct ctp_event *ev)
{
	const struct ctp_trace_line *line = ev->line;
	json_t *parsed = ctp_trace_line_json(line);
	json_t *copy = json_deep_copy(parsed);
	json_decref(parsed);
	if (!copy || json_object_set_new(copy, "lines", json_integer((json_int_t)f->written)) < 0) {
		json_decref(copy);
		return write_event(f, ev);
	}
	char *text = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
	struct ctp_trace_line end_line = *line;
	end_line.json = copy;
	end_line.flat = NULL;
	if (text) {
		end_line.text = text;
		end_line.len = strlen(text);
	}
	struct ctp_event end = *ev;
	end.line = &end_line;
	end.end.lines = f->written;
	end.end.has_lines = true;
	int rc = f->inner.event(f->inner.state, &end);
	free(text);
	json_decref(copy);
	return rc;
}

static int filter_event(void *state, const struct ctp_event *ev)
{
	struct filter *f = state;
	if (ev->type == CTP_EV_TRACE) {
		uint64_t start = ev->trace.start;
		f->since = f->spec->has_since ? ctp_cat_time_resolve(&f->spec->since, start) : 0;
		f->until = f->spec->has_until ? ctp_cat_time_resolve(&f->spec->until, start)
					      : UINT64_MAX;
		if (ctp_event_decode(&f->decoder, ev->line, &(struct ctp_event){0}) < 0)
			return -1; /* the decoder of held lines learns the format version */
		return write_event(f, ev);
	}
	if (ev->type == CTP_EV_END && ev->line)
		return write_end_line(f, ev);
	enum verdict v = judge(f, ev);
	uint32_t a;
	uint64_t b;
	if (def_of(ev, &a, &b)) {
		if (v != KEEP) {
			/* A later definition of the same thing (a process after exec) replaces the
			 * held one, or makes it writable again once the old one was written. */
			return set_def(f, a, b, ev->line->text, ev->line->len);
		}
		/* Marked first, so that the line's references to itself write nothing. */
		if (set_def(f, a, b, NULL, 0) < 0)
			return -1;
		return write_event(f, ev);
	}
	if (v == REJECT)
		return 0;
	return write_event(f, ev);
}

static int filter_finish(void *state)
{
	struct filter *f = state;
	return f->inner.finish(f->inner.state);
}

/* How reading ended matters to outputs that judge the whole (the Chrome findings, exports). */
static void filter_ended(void *state, const struct ctp_trace_end *end)
{
	struct filter *f = state;
	if (f->inner.ended)
		f->inner.ended(f->inner.state, end);
}

static int filter_idle(void *state)
{
	struct filter *f = state;
	return f->inner.idle ? f->inner.idle(f->inner.state) : 0;
}

static int filter_status(void *state)
{
	struct filter *f = state;
	return f->inner.status ? f->inner.status(f->inner.state) : 0;
}

static void filter_free(void *state)
{
	struct filter *f = state;
	f->inner.free(f->inner.state);
	for (size_t i = 0; i < f->nheld; i++)
		free(f->held[i].text);
	free(f->held);
	ctp_idmap_free(&f->def_index);
	ctp_event_decoder_free(&f->decoder);
	ctp_resym_free(f->resym);
	free(f);
}

int ctp_cat_filter_open(struct ctp_cat_output *out, const struct ctp_cat_filter_spec *spec,
			const struct ctp_cat_output *inner)
{
	struct filter *f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	ctp_event_decoder_init(&f->decoder);
	f->resym = ctp_resym_attach(&f->decoder);
	f->spec = spec;
	f->inner = *inner;
	f->until = UINT64_MAX;
	out->state = f;
	out->event = filter_event;
	out->finish = filter_finish;
	out->free = filter_free;
	out->ended = filter_ended;
	out->status = filter_status;
	out->idle = filter_idle;
	out->lines_only = false; /* it judges decoded events */
	return 0;
}

/* The filter stage: judges each line, holds definitions back until something kept refers to
 * them. Held definitions are kept as the text of their line (one jansson string per process,
 * coroutine and stack not yet written) and parsed again when they are written: that happens at
 * most once per definition, and most filtered views write few of them. */
#include "cat/filter.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/names.h"

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

struct filter {
	const struct ctp_cat_filter_spec *spec;
	struct ctp_cat_output inner;
	/* "p:pid", "c:pid:coro", "s:pid:id" -> the held line's text, or true once written. */
	json_t *defs;
	uint64_t since, until; /* resolved at the header */
	uint64_t written;      /* lines passed on */
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

static enum verdict judge(const struct filter *f, const json_t *line, const char *type)
{
	const struct ctp_cat_filter_spec *s = f->spec;
	enum verdict v = KEEP;
	uint64_t x;
	if (s->ntypes) {
		bool listed = false;
		for (size_t i = 0; i < s->ntypes && !listed; i++)
			listed = strcmp(s->types[i], type) == 0;
		fold(&v, true, listed);
	}
	if (s->pids.n) {
		bool has = ctp_cat_u64(line, "pid", &x);
		fold(&v, has, has && ids_have(&s->pids, x));
	}
	if (s->tids.n) {
		bool has = ctp_cat_u64(line, "tid", &x);
		fold(&v, has, has && ids_have(&s->tids, x));
	}
	if (s->coros.n) {
		/* `waiter`: an fd event that concerns the coroutine waiting on the fd. */
		static const char *const fields[] = {"coro", "from", "to", "waiter"};
		bool has = false, match = false;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (ctp_cat_u64(line, fields[i], &x)) {
				has = true;
				match = match || ids_have(&s->coros, x);
			}
		}
		fold(&v, has, match);
	}
	if (s->has_since || s->has_until) {
		bool has = ctp_cat_u64(line, "ts", &x);
		fold(&v, has, has && x >= f->since && x <= f->until);
	}
	return v;
}

/* The key of the definition a line makes, false for lines that define nothing. */
static bool def_key(const json_t *line, const char *type, char *key, size_t size)
{
	uint64_t pid, id;
	if (!ctp_cat_u64(line, "pid", &pid))
		return false;
	if (strcmp(type, "process") == 0)
		snprintf(key, size, "p:%" PRIu64, pid);
	else if (strcmp(type, "coro") == 0 && ctp_cat_u64(line, "coro", &id))
		snprintf(key, size, "c:%" PRIu64 ":%" PRIu64, pid, id);
	else if (strcmp(type, "stack") == 0 && ctp_cat_u64(line, "id", &id))
		snprintf(key, size, "s:%" PRIu64 ":%" PRIu64, pid, id);
	else
		return false;
	return true;
}

static int write_line(struct filter *f, const struct ctp_trace_line *line);

/* Writes the held definition `key` if there is one not yet written. */
static int write_def(struct filter *f, const char *key)
{
	json_t *held = json_object_get(f->defs, key);
	if (!json_is_string(held))
		return 0;
	/* Take the text before marking the definition written (which frees it). */
	json_incref(held);
	json_object_set_new(f->defs, key, json_true());
	struct ctp_trace_line line = {
		.text = json_string_value(held),
		.len = json_string_length(held),
	};
	line.json = json_loadb(line.text, line.len, JSON_ALLOW_NUL, NULL);
	int rc = line.json ? write_line(f, &line) : 0;
	json_decref(line.json);
	json_decref(held);
	return rc;
}

/* Writes the definitions `line` refers to, then the line. */
static int write_line(struct filter *f, const struct ctp_trace_line *line)
{
	static const char *const coro_fields[] = {"coro", "from", "to", "parent", "waiter"};
	const char *type = ctp_cat_type(line->json);
	char key[64];
	uint64_t pid, id;
	if (ctp_cat_u64(line->json, "pid", &pid)) {
		if (strcmp(type, "process") != 0) {
			snprintf(key, sizeof(key), "p:%" PRIu64, pid);
			if (write_def(f, key) < 0)
				return -1;
		}
		for (size_t i = 0; i < sizeof(coro_fields) / sizeof(coro_fields[0]); i++) {
			if (!ctp_cat_u64(line->json, coro_fields[i], &id))
				continue;
			snprintf(key, sizeof(key), "c:%" PRIu64 ":%" PRIu64, pid, id);
			if (write_def(f, key) < 0)
				return -1;
		}
		if (ctp_cat_u64(line->json, "stack", &id)) {
			snprintf(key, sizeof(key), "s:%" PRIu64 ":%" PRIu64, pid, id);
			if (write_def(f, key) < 0)
				return -1;
		}
	}
	if (f->inner.line(f->inner.state, line) < 0)
		return -1;
	f->written++;
	return 0;
}

/* The `end` line counts the lines before it: say how many this view has, not the original. */
static int write_end_line(struct filter *f, const struct ctp_trace_line *line)
{
	json_t *copy = json_deep_copy(line->json);
	if (!copy || json_object_set_new(copy, "lines", json_integer((json_int_t)f->written)) < 0) {
		json_decref(copy);
		return write_line(f, line);
	}
	char *text = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
	struct ctp_trace_line end = *line;
	end.json = copy;
	if (text) {
		end.text = text;
		end.len = strlen(text);
	}
	int rc = f->inner.line(f->inner.state, &end);
	free(text);
	json_decref(copy);
	return rc;
}

static int filter_line(void *state, const struct ctp_trace_line *line)
{
	struct filter *f = state;
	const char *type = ctp_cat_type(line->json);
	if (strcmp(type, "trace") == 0) {
		uint64_t start = 0;
		ctp_cat_u64(line->json, "start", &start);
		f->since = f->spec->has_since ? ctp_cat_time_resolve(&f->spec->since, start) : 0;
		f->until = f->spec->has_until ? ctp_cat_time_resolve(&f->spec->until, start)
					      : UINT64_MAX;
		return write_line(f, line);
	}
	if (strcmp(type, "end") == 0)
		return write_end_line(f, line);
	enum verdict v = judge(f, line->json, type);
	char key[64];
	if (def_key(line->json, type, key, sizeof(key))) {
		if (v != KEEP) {
			/* A later definition of the same thing (a process after exec) replaces the
			 * held one, or makes it writable again once the old one was written. */
			json_object_set_new(f->defs, key, json_stringn(line->text, line->len));
			return 0;
		}
		/* Marked first, so that the line's references to itself write nothing. */
		json_object_set_new(f->defs, key, json_true());
		return write_line(f, line);
	}
	if (v == REJECT)
		return 0;
	return write_line(f, line);
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

static void filter_free(void *state)
{
	struct filter *f = state;
	f->inner.free(f->inner.state);
	json_decref(f->defs);
	free(f);
}

int ctp_cat_filter_open(struct ctp_cat_output *out, const struct ctp_cat_filter_spec *spec,
			const struct ctp_cat_output *inner)
{
	struct filter *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->defs = json_object();
	if (!f->defs) {
		free(f);
		errno = ENOMEM;
		return -1;
	}
	f->spec = spec;
	f->inner = *inner;
	f->until = UINT64_MAX;
	out->state = f;
	out->line = filter_line;
	out->finish = filter_finish;
	out->free = filter_free;
	out->ended = filter_ended;
	return 0;
}

/* Text output: one aligned line per event, for people. Time counts from the trace's start,
 * coroutines are named "entry#id", and a stack shows as its innermost frame, so that a switch
 * reads as "who -> whom, from where". `stack` lines define what others show inline and make no
 * line of their own; the header becomes one '#' comment line. Colour only on a terminal and
 * when NO_COLOR is unset (no-color.org). Strings from the trace are the traced program's and
 * may hold anything: control bytes are shown as '?'. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/names.h"

#define OUT_BUFFER_SIZE (64u << 10)
#define NAME_SIZE 256

struct out_text {
	FILE *f;
	bool colour;
	uint64_t start;
	struct ctp_cat_names *names;
};

enum paint { PLAIN, DIM, EVENT, ALERT, NOTE };

static void paint(struct out_text *o, enum paint p)
{
	static const char *const codes[] = {"\033[0m", "\033[2m", "\033[36m", "\033[31m",
					    "\033[33m"};
	if (o->colour)
		fputs(codes[p], o->f);
}

static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		putc_unlocked((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* "   1.234567890s": seconds since the start, to the nanosecond, in a fixed width. */
static void put_time(struct out_text *o, const json_t *line)
{
	uint64_t ts;
	paint(o, DIM);
	if (!ctp_cat_u64(line, "ts", &ts)) {
		fprintf(o->f, "%15s", "-");
	} else if (ts >= o->start) {
		uint64_t rel = ts - o->start;
		fprintf(o->f, "%4" PRIu64 ".%09" PRIu64 "s", rel / 1000000000u, rel % 1000000000u);
	} else {
		uint64_t rel = o->start - ts;
		fprintf(o->f, "%3s-%" PRIu64 ".%09" PRIu64 "s", "", rel / 1000000000u,
			rel % 1000000000u);
	}
	paint(o, PLAIN);
}

static void put_id(FILE *f, const json_t *line, const char *key)
{
	uint64_t v;
	if (ctp_cat_u64(line, key, &v))
		fprintf(f, " %7" PRIu64, v);
	else
		fprintf(f, " %7s", "-");
}

static void put_coro(struct out_text *o, uint64_t pid, const json_t *line, const char *key)
{
	uint64_t id;
	char name[NAME_SIZE];
	if (ctp_cat_u64(line, key, &id))
		put_clean(o->f, ctp_cat_names_coro(o->names, pid, id, name, sizeof(name)));
	else
		fputs("?", o->f);
}

static void put_stack(struct out_text *o, uint64_t pid, const json_t *line, const char *prefix)
{
	uint64_t id;
	if (!ctp_cat_u64(line, "stack", &id))
		return;
	const char *top = ctp_cat_names_stack_top(o->names, pid, id);
	fputs(prefix, o->f);
	if (top)
		put_clean(o->f, top);
	else
		fprintf(o->f, "stack %" PRIu64, id);
}

static void put_process(struct out_text *o, const json_t *line)
{
	uint64_t ppid;
	if (ctp_cat_u64(line, "ppid", &ppid))
		fprintf(o->f, "ppid %" PRIu64 " ", ppid);
	json_t *argv = json_object_get(line, "argv");
	size_t i;
	json_t *arg;
	if (json_array_size(argv) == 0) {
		const char *exe = json_string_value(json_object_get(line, "exe"));
		put_clean(o->f, exe ? exe : "?");
		return;
	}
	json_array_foreach(argv, i, arg)
	{
		if (i)
			putc_unlocked(' ', o->f);
		const char *s = json_string_value(arg);
		put_clean(o->f, s ? s : "?");
	}
}

static void put_details(struct out_text *o, const char *type, uint64_t pid, const json_t *line)
{
	FILE *f = o->f;
	const char *s;
	uint64_t v;
	if (strcmp(type, "switch") == 0) {
		put_coro(o, pid, line, "from");
		fputs(" -> ", f);
		put_coro(o, pid, line, "to");
		s = json_string_value(json_object_get(line, "how"));
		fputs("  ", f);
		put_clean(f, s ? s : "?");
		put_stack(o, pid, line, "  at ");
	} else if (strcmp(type, "coro") == 0) {
		put_coro(o, pid, line, "coro");
		s = json_string_value(json_object_get(line, "kind"));
		fputs(" (", f);
		put_clean(f, s ? s : "?");
		fputs(")", f);
		if (ctp_cat_u64(line, "parent", &v)) {
			fputs(" made by ", f);
			put_coro(o, pid, line, "parent");
		}
		put_stack(o, pid, line, "  at ");
	} else if (strcmp(type, "coro_end") == 0) {
		put_coro(o, pid, line, "coro");
		s = json_string_value(json_object_get(line, "how"));
		fputs(" ended: ", f);
		put_clean(f, s ? s : "?");
		s = json_string_value(json_object_get(line, "switch"));
		if (s) {
			fputs(" by ", f);
			put_clean(f, s);
		}
	} else if (strcmp(type, "process") == 0) {
		put_process(o, line);
	} else if (strcmp(type, "state") == 0) {
		put_coro(o, pid, line, "coro");
		s = json_string_value(json_object_get(line, "state"));
		putc_unlocked(' ', f);
		put_clean(f, s ? s : "?");
		if (ctp_cat_u64(line, "switches", &v))
			fprintf(f, ", resumed %" PRIu64 "x", v);
		put_stack(o, pid, line, "  at ");
	} else if (strcmp(type, "loss") == 0) {
		paint(o, ALERT);
		if (ctp_cat_u64(line, "count", &v))
			fprintf(f, "%" PRIu64 " events lost", v);
		else
			fputs("events lost", f);
		paint(o, PLAIN);
	} else if (strcmp(type, "exit") == 0) {
		if (ctp_cat_u64(line, "signal", &v)) {
			paint(o, ALERT);
			fprintf(f, "killed by signal %" PRIu64, v);
			paint(o, PLAIN);
			if (ctp_cat_u64(line, "coro", &v)) {
				fputs(" while running ", f);
				put_coro(o, pid, line, "coro");
			}
		} else if (ctp_cat_u64(line, "status", &v)) {
			fprintf(f, "status %" PRIu64, v);
		}
	} else {
		/* A line type this version does not know: all of it, on one line. */
		char *text = json_dumps(line, JSON_COMPACT);
		if (text)
			put_clean(f, text);
		free(text);
	}
}

static int text_line(void *state, const struct ctp_trace_line *line)
{
	struct out_text *o = state;
	const json_t *j = line->json;
	const char *type = ctp_cat_type(j);
	ctp_cat_names_see(o->names, j);
	if (strcmp(type, "stack") == 0)
		return 0;
	if (strcmp(type, "trace") == 0) {
		ctp_cat_u64(j, "start", &o->start);
		const char *tool = json_string_value(json_object_get(j, "tool"));
		fputs("# ctp trace by ", o->f);
		put_clean(o->f, tool ? tool : "?");
		fprintf(o->f,
			", start %" PRIu64 " ns; columns: time since start, pid, tid, event\n",
			o->start);
		return ferror(o->f) ? -1 : 0;
	}
	uint64_t pid = 0;
	ctp_cat_u64(j, "pid", &pid);
	put_time(o, j);
	put_id(o->f, j, "pid");
	put_id(o->f, j, "tid");
	putc_unlocked(' ', o->f);
	bool alert = strcmp(type, "loss") == 0 || strcmp(type, "exit") == 0;
	paint(o, alert ? ALERT : strcmp(type, "switch") == 0 ? EVENT : NOTE);
	fprintf(o->f, " %-8.32s ", type);
	paint(o, PLAIN);
	put_details(o, type, pid, j);
	putc_unlocked('\n', o->f);
	return ferror(o->f) ? -1 : 0;
}

static int text_finish(void *state)
{
	struct out_text *o = state;
	return fflush(o->f) == 0 ? 0 : -1;
}

static void text_free(void *state)
{
	struct out_text *o = state;
	ctp_cat_names_free(o->names);
	free(o);
}

int ctp_cat_out_text_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_text *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->names = ctp_cat_names_new();
	if (!o->names) {
		free(o);
		return -1;
	}
	o->f = f;
	const char *no_colour = getenv("NO_COLOR");
	o->colour = isatty(fileno(f)) && !(no_colour && *no_colour);
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	out->state = o;
	out->line = text_line;
	out->finish = text_finish;
	out->free = text_free;
	return 0;
}

/* Text output: one aligned line per event, for people. Time counts from the trace's start,
 * coroutines are named "entry#id", and a stack shows as its innermost frame, so that a switch
 * reads as "who -> whom, from where"; C++ names are shortened as the report shortens them.
 * `stack` lines define what others show inline and make no line of their own; the header
 * becomes one '#' comment line. Colour only on a terminal and when NO_COLOR is unset
 * (no-color.org). Strings from the trace are the traced program's and may hold anything:
 * control bytes are shown as '?'. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/model/names.h"
#include "cat/outputs/view.h"
#include "ctp/cxx_name.h"
#include "ctp/segment.h"

/* Entries this long or shorter make "entry#id" of under 256 bytes, whatever the id. */
#define LONG_NAME 200

struct out_text {
	struct ctp_cat_view v;
	bool colour;
	bool full_names; /* --full-names: C++ names with their template arguments */
	uint64_t start;
};

enum paint { PLAIN, DIM, EVENT, ALERT, NOTE };

static void paint(struct out_text *o, enum paint p)
{
	static const char *const codes[] = {"\033[0m", "\033[2m", "\033[36m", "\033[31m",
					    "\033[33m"};
	if (o->colour)
		fputs(codes[p], o->v.f);
}

static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		putc_unlocked((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* `v` in decimal, right-aligned in `width` with `pad` ('0' or ' '), as printf's "%*" PRIu64
 * would write it: without printf, which was the largest cost of the text output (three numbers
 * a line). */
static void put_u64(FILE *f, uint64_t v, int width, char pad)
{
	char digits[20];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = n; i < width; i++)
		putc_unlocked(pad, f);
	while (n)
		putc_unlocked(digits[--n], f);
}

/* `s` left-aligned in `width` columns, at most `max` bytes of it (printf "%-width.maxs"). */
static void put_left(FILE *f, const char *s, size_t width, size_t max)
{
	size_t n = strnlen(s, max);
	fwrite_unlocked(s, 1, n, f);
	for (; n < width; n++)
		putc_unlocked(' ', f);
}

/* "   1.234567890s": seconds since the start, to the nanosecond, in a fixed width. */
static void put_time(struct out_text *o, uint64_t ts)
{
	paint(o, DIM);
	if (!ts) {
		put_left(o->v.f, "", 14, 0);
		putc_unlocked('-', o->v.f);
	} else {
		uint64_t rel = ts >= o->start ? ts - o->start : o->start - ts;
		if (ts < o->start)
			fputs("   -", o->v.f);
		put_u64(o->v.f, rel / 1000000000u, ts >= o->start ? 4 : 0, ' ');
		putc_unlocked('.', o->v.f);
		put_u64(o->v.f, rel % 1000000000u, 9, '0');
		putc_unlocked('s', o->v.f);
	}
	paint(o, PLAIN);
}

static void put_id(FILE *f, uint64_t v)
{
	putc_unlocked(' ', f);
	if (v)
		put_u64(f, v, 7, ' ');
	else
		fputs("      -", f);
}

/* A symbol for people: each outermost C++ template argument list as <...> unless --full-names
 * (ctp/cxx_name.h). NULL when it is to be written as it is: not C++ with templates, or longer
 * than `cap` even shortened. */
static const char *short_name(const struct out_text *o, const char *name, char *buf, size_t cap)
{
	if (o->full_names || !strchr(name, '<'))
		return NULL;
	return ctp_cxx_name_short(name, buf, cap) < cap ? buf : NULL;
}

static void put_name(struct out_text *o, const char *name)
{
	char buf[1024];
	const char *shortened = short_name(o, name, buf, sizeof(buf));
	put_clean(o->v.f, shortened ? shortened : name);
}

/* "entry#id" (ctp_cat_names_coro), written piece by piece; through its bounded buffer when the
 * entry is long, so that a long name is cut where it always was. */
static void put_coro(struct out_text *o, uint32_t pid, uint64_t id)
{
	if (!id) {
		fputs("?", o->v.f);
		return;
	}
	const char *entry = ctp_cat_names_entry(o->v.names, pid, id);
	char buf[LONG_NAME + 1];
	const char *shortened = short_name(o, entry, buf, sizeof(buf));
	if (shortened)
		entry = shortened;
	if (strlen(entry) > LONG_NAME) {
		char name[256];
		put_clean(o->v.f, ctp_cat_names_coro(o->v.names, pid, id, name, sizeof(name)));
		return;
	}
	put_clean(o->v.f, entry);
	putc_unlocked('#', o->v.f);
	put_u64(o->v.f, id, 0, ' ');
}

static void put_word(FILE *f, const char *s)
{
	put_clean(f, s ? s : "?");
}

static void put_stack(struct out_text *o, uint32_t pid, uint32_t id, const char *prefix)
{
	if (!id)
		return;
	const char *top = ctp_cat_names_stack_top(o->v.names, pid, id);
	fputs(prefix, o->v.f);
	if (top)
		put_name(o, top);
	else
		fprintf(o->v.f, "stack %" PRIu32, id);
}

static void put_process(struct out_text *o, const struct ctp_event *ev)
{
	if (ev->process.has_ppid)
		fprintf(o->v.f, "ppid %" PRIu32 " ", ev->process.ppid);
	if (ev->process.argc == 0) {
		put_word(o->v.f, ev->process.exe);
		return;
	}
	for (size_t i = 0; i < ev->process.argc; i++) {
		if (i)
			putc_unlocked(' ', o->v.f);
		put_word(o->v.f, ev->process.argv[i]);
	}
}

static void put_details(struct out_text *o, const struct ctp_event *ev)
{
	FILE *f = o->v.f;
	uint32_t pid = ev->pid;
	switch (ev->type) {
	case CTP_EV_SWITCH:
		put_coro(o, pid, ev->sw.from);
		fputs(" -> ", f);
		put_coro(o, pid, ev->sw.to);
		fputs("  ", f);
		put_word(f, ev->sw.how_name);
		put_stack(o, pid, ev->stack, "  at ");
		break;
	case CTP_EV_CORO:
		put_coro(o, pid, ev->coro);
		fputs(" (", f);
		put_word(f, ev->coro_line.kind_name);
		fputs(")", f);
		if (ev->coro_line.parent) {
			fputs(" made by ", f);
			put_coro(o, pid, ev->coro_line.parent);
		}
		put_stack(o, pid, ev->stack, "  at ");
		break;
	case CTP_EV_CORO_END:
		put_coro(o, pid, ev->coro);
		fputs(" ended: ", f);
		put_word(f, ev->coro_end.how_name);
		if (ev->coro_end.switch_name) {
			fputs(" by ", f);
			put_clean(f, ev->coro_end.switch_name);
		}
		break;
	case CTP_EV_PROCESS:
		put_process(o, ev);
		break;
	case CTP_EV_STATE:
		put_coro(o, pid, ev->coro);
		putc_unlocked(' ', f);
		put_word(f, ev->state.state_name);
		if (ev->state.has_switches)
			fprintf(f, ", resumed %" PRIu64 "x", ev->state.switches);
		put_stack(o, pid, ev->stack, "  at ");
		break;
	case CTP_EV_LOSS:
		paint(o, ALERT);
		if (ev->loss.has_count)
			fprintf(f, "%" PRIu64 " event%s lost", ev->loss.count,
				ev->loss.count == 1 ? "" : "s");
		else
			fputs("events lost", f);
		paint(o, PLAIN);
		break;
	case CTP_EV_EXIT:
		if (ev->exit.kind == CTP_EXIT_LINE_SIGNAL) {
			paint(o, ALERT);
			fprintf(f, "killed by signal %d", ev->exit.value);
			paint(o, PLAIN);
			if (ev->coro) {
				fputs(" while running ", f);
				put_coro(o, pid, ev->coro);
			}
		} else if (ev->exit.kind == CTP_EXIT_LINE_STATUS) {
			fprintf(f, "status %d", ev->exit.value);
		}
		break;
	case CTP_EV_SNAPSHOT:
		fputs("a live look at the process: the states below are as they were then", f);
		break;
	default: {
		/* A line type this version does not know: all of it, on one line. */
		char *text = ev->json ? json_dumps(ev->json, JSON_COMPACT) : NULL;
		if (text)
			put_clean(f, text);
		free(text);
		break;
	}
	}
}

static int text_event(void *state, const struct ctp_event *ev)
{
	struct out_text *o = state;
	if (ctp_cat_names_see(o->v.names, ev) < 0)
		return -1;
	/* Definitions, not events: stacks show where lines refer to them, modules in names. */
	if (ev->type == CTP_EV_STACK || ev->type == CTP_EV_MODULE)
		return 0;
	if (ev->type == CTP_EV_TRACE) {
		o->start = ev->trace.start;
		fputs("# ctp trace by ", o->v.f);
		put_word(o->v.f, ev->trace.tool);
		fprintf(o->v.f,
			", start %" PRIu64 " ns; columns: time since start, pid, tid, event\n",
			o->start);
		return ferror(o->v.f) ? -1 : 0;
	}
	put_time(o, ev->ts);
	put_id(o->v.f, ev->pid);
	put_id(o->v.f, ev->tid);
	putc_unlocked(' ', o->v.f);
	bool alert = ev->type == CTP_EV_LOSS || ev->type == CTP_EV_EXIT;
	paint(o, alert ? ALERT : ev->type == CTP_EV_SWITCH ? EVENT : NOTE);
	putc_unlocked(' ', o->v.f);
	put_left(o->v.f, ev->type_name, 8, 32);
	putc_unlocked(' ', o->v.f);
	paint(o, PLAIN);
	put_details(o, ev);
	putc_unlocked('\n', o->v.f);
	return ferror(o->v.f) ? -1 : 0;
}

int ctp_cat_out_text_open(struct ctp_cat_output *out, FILE *f, bool full_names)
{
	struct out_text *o = ctp_cat_view_new(sizeof(*o), f, true);
	if (!o)
		return -1;
	o->full_names = full_names;
	const char *no_colour = getenv("NO_COLOR");
	o->colour = isatty(fileno(f)) && !(no_colour && *no_colour);
	out->state = o;
	out->event = text_event;
	out->finish = ctp_cat_view_finish;
	out->free = ctp_cat_view_free;
	return 0;
}

/* CSV output: one row per switch, for spreadsheets and SQL (`sqlite3 .import`, pandas, Python's
 * csv). RFC 4180: a header row, CRLF line ends, and fields holding a comma, a quote or a line
 * break quoted with quotes doubled (C++ symbols hold commas: "f(int, char)"). `ts` is the
 * trace's absolute CLOCK_MONOTONIC nanoseconds; `stack` is the innermost frame of the stack
 * where `from` suspended, empty when there is none. Other lines make no rows. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/model/names.h"
#include "cat/outputs/view.h"

struct out_csv {
	struct ctp_cat_view v;
};

static void put_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	putc_unlocked('"', f);
	for (; *s; s++) {
		if (*s == '"')
			putc_unlocked('"', f);
		putc_unlocked(*s, f);
	}
	putc_unlocked('"', f);
}

static void put_u64(FILE *f, uint64_t v)
{
	if (v)
		fprintf(f, "%" PRIu64, v);
}

static int csv_event(void *state, const struct ctp_event *ev)
{
	struct out_csv *o = state;
	if (ctp_cat_names_see(o->v.names, ev) < 0)
		return -1;
	if (ev->type != CTP_EV_SWITCH)
		return 0;
	FILE *f = o->v.f;
	put_u64(f, ev->ts);
	putc_unlocked(',', f);
	put_u64(f, ev->pid);
	putc_unlocked(',', f);
	put_u64(f, ev->tid);
	putc_unlocked(',', f);
	put_u64(f, ev->sw.from);
	putc_unlocked(',', f);
	put_u64(f, ev->sw.to);
	putc_unlocked(',', f);
	put_field(f, ev->sw.how_name);
	putc_unlocked(',', f);
	put_field(f, ev->sw.from ? ctp_cat_names_entry(o->v.names, ev->pid, ev->sw.from) : NULL);
	putc_unlocked(',', f);
	put_field(f, ev->sw.to ? ctp_cat_names_entry(o->v.names, ev->pid, ev->sw.to) : NULL);
	putc_unlocked(',', f);
	if (ev->stack)
		put_field(f, ctp_cat_names_stack_top(o->v.names, ev->pid, ev->stack));
	fputs("\r\n", f);
	return ferror(f) ? -1 : 0;
}

int ctp_cat_out_csv_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_csv *o = ctp_cat_view_new(sizeof(*o), f, true);
	if (!o)
		return -1;
	/* Written once nothing more can fail, so that a failed open writes nothing. */
	fputs("ts,pid,tid,from,to,how,from_entry,to_entry,stack\r\n", f);
	out->state = o;
	out->event = csv_event;
	out->finish = ctp_cat_view_finish;
	out->free = ctp_cat_view_free;
	return 0;
}

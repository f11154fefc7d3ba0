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

#define OUT_BUFFER_SIZE (64u << 10)

struct out_csv {
	FILE *f;
	struct ctp_cat_names *names;
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
	if (ctp_cat_names_see(o->names, ev) < 0)
		return -1;
	if (ev->type != CTP_EV_SWITCH)
		return 0;
	FILE *f = o->f;
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
	put_field(f, ev->sw.from ? ctp_cat_names_entry(o->names, ev->pid, ev->sw.from) : NULL);
	putc_unlocked(',', f);
	put_field(f, ev->sw.to ? ctp_cat_names_entry(o->names, ev->pid, ev->sw.to) : NULL);
	putc_unlocked(',', f);
	if (ev->stack)
		put_field(f, ctp_cat_names_stack_top(o->names, ev->pid, ev->stack));
	fputs("\r\n", f);
	return ferror(f) ? -1 : 0;
}

static int csv_finish(void *state)
{
	struct out_csv *o = state;
	return fflush(o->f) == 0 ? 0 : -1;
}

static void csv_free(void *state)
{
	struct out_csv *o = state;
	ctp_cat_names_free(o->names);
	free(o);
}

int ctp_cat_out_csv_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_csv *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->names = ctp_cat_names_new();
	if (!o->names) {
		free(o);
		return -1;
	}
	o->f = f;
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	/* Written once nothing more can fail, so that a failed open writes nothing. */
	fputs("ts,pid,tid,from,to,how,from_entry,to_entry,stack\r\n", f);
	out->state = o;
	out->event = csv_event;
	out->finish = csv_finish;
	out->free = csv_free;
	return 0;
}

/* `ctp-cat --report` as an output of the read loop: once the run's analysis is finished, the
 * text or JSON report of it (cat/analysis/report.h), and exit status 3 when it found failures.
 *
 * With --follow, also a report each time the analysis stage judged a whole round of live
 * snapshots (`refresh`), and the last one at the end of following: on a terminal the text
 * report redraws the screen, like top; elsewhere the reports follow one another, each after a
 * line that says which it is, and --json writes one document per line (docs/report.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/analysis/report.h"

struct out_report {
	FILE *f;
	bool json;
	bool full_names;
	bool follow;
	bool terminal; /* follow: redraw the screen for each report */
	uint64_t reports;
	const char *name;
	const struct ctp_analysis *a; /* fed and judged by the run's analysis stage */
	struct ctp_trace_end end;
	bool ended;
	int status;
};

static int report_event(void *state, const struct ctp_event *ev)
{
	(void)state; /* the analysis stage in front has fed the analysis */
	(void)ev;
	return 0;
}

static void report_ended(void *state, const struct ctp_trace_end *end)
{
	struct out_report *o = state;
	o->end = *end;
	o->ended = true;
}

/* The latest live snapshot the analysis holds (0: none). */
static uint64_t latest_snapshot(const struct ctp_analysis *a)
{
	uint64_t ts = 0;
	for (size_t i = 0; i < ctp_analysis_process_count(a); i++) {
		const struct ctp_analysis_process *p = ctp_analysis_process_at(a, i);
		if (p->exit == CTP_ANALYSIS_EXIT_SNAPSHOT && p->snapshot_ts > ts)
			ts = p->snapshot_ts;
	}
	return ts;
}

/* The line before a followed text report: which one it is, and what it shows. */
static void put_heading(const struct out_report *o, FILE *f, bool final, uint64_t snapshot_ts)
{
	char clock[16] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (localtime_r(&now, &tm))
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	if (o->terminal)
		fputs("\033[H\033[2J", f); /* home, clear the screen */
	else
		fputs("=== ", f);
	fprintf(f, "ctp-cat --follow --report, report %" PRIu64 " at %s: ", o->reports, clock);
	uint64_t first = ctp_analysis_summary(o->a)->first_ts;
	if (final)
		fputs("the end of following", f);
	else
		fprintf(f, "snapshot %.3f s into the trace",
			snapshot_ts > first ? (double)(snapshot_ts - first) / 1e9 : 0.0);
	fputs(o->terminal ? "\n\n" : " ===\n", f);
}

/* One followed report, written to f. */
static int compose_followed(struct out_report *o, FILE *f, bool final)
{
	uint64_t snapshot_ts = latest_snapshot(o->a);
	if (o->json) {
		struct ctp_cat_report_refresh r = {o->reports, final, snapshot_ts};
		return ctp_cat_report_json(f, o->a, o->name, &r);
	}
	if (!o->terminal && o->reports > 1 && fputc('\n', f) == EOF)
		return -1;
	put_heading(o, f, final, snapshot_ts);
	return ctp_cat_report_text(f, o->a, o->name, o->full_names);
}

static int write_report(struct out_report *o, bool final)
{
	if (!o->follow)
		return o->json ? ctp_cat_report_json(o->f, o->a, o->name, NULL)
			       : ctp_cat_report_text(o->f, o->a, o->name, o->full_names);
	o->reports++;
	/* Made whole in memory, then written at once: a reader of the file (tail -f, a script
	 * waiting for a report) never finds one cut where the output's buffer happened to fill
	 * (a report of 47 lost wakeups with their stacks is several buffers long). */
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return -1;
	int r = compose_followed(o, mem, final);
	if (fclose(mem) != 0)
		r = -1;
	if (r == 0 && (fwrite(text, 1, len, o->f) != len || fflush(o->f) != 0))
		r = -1;
	free(text);
	return r < 0 ? -1 : 0;
}

static int report_refresh(void *state)
{
	return write_report(state, false);
}

static int report_finish(void *state)
{
	struct out_report *o = state;
	/* Not a trace, or unreadable: the read loop says so; there is nothing to report on. */
	if (o->ended && (o->end.kind == CTP_TRACE_NOT_TRACE || o->end.kind == CTP_TRACE_IO_ERROR))
		return 0;
	if (write_report(o, true) < 0)
		return -1;
	o->status = ctp_analysis_failure_count(o->a) ? CTP_CAT_EXIT_FINDINGS : CTP_CAT_EXIT_OK;
	return 0;
}

static int report_status(void *state)
{
	return ((struct out_report *)state)->status;
}

static void report_free(void *state)
{
	free(state);
}

int ctp_cat_out_report_open(struct ctp_cat_output *out, FILE *f, const struct ctp_cat_options *opt,
			    const struct ctp_analysis *a)
{
	struct out_report *o = calloc(1, sizeof(*o));
	if (!o) {
		errno = ENOMEM;
		return -1;
	}
	o->a = a;
	o->f = f;
	o->json = opt->format == CTP_CAT_FORMAT_REPORT_JSON;
	o->full_names = opt->full_names;
	o->follow = opt->follow;
	o->terminal = opt->follow && !o->json && isatty(fileno(f));
	o->name = strcmp(opt->input, "-") == 0 ? "(standard input)" : opt->input;
	out->state = o;
	out->event = report_event;
	out->ended = report_ended;
	out->finish = report_finish;
	out->status = report_status;
	out->free = report_free;
	if (opt->follow)
		out->refresh = report_refresh;
	return 0;
}

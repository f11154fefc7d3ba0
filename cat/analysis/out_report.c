/* `ctp-cat --report` as an output of the read loop: once the run's analysis is finished, the
 * text or JSON report of it (cat/analysis/report.h), and exit status 3 when it found failures. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/analysis/report.h"

struct out_report {
	FILE *f;
	bool json;
	bool full_names;
	const char *name;
	const struct ctp_analysis *a; /* fed and finished by the run's analysis stage */
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

static int report_finish(void *state)
{
	struct out_report *o = state;
	/* Not a trace, or unreadable: the read loop says so; there is nothing to report on. */
	if (o->ended && (o->end.kind == CTP_TRACE_NOT_TRACE || o->end.kind == CTP_TRACE_IO_ERROR))
		return 0;
	int rc = o->json ? ctp_cat_report_json(o->f, o->a, o->name)
			 : ctp_cat_report_text(o->f, o->a, o->name, o->full_names);
	if (rc < 0)
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
	o->name = strcmp(opt->input, "-") == 0 ? "(standard input)" : opt->input;
	out->state = o;
	out->event = report_event;
	out->ended = report_ended;
	out->finish = report_finish;
	out->status = report_status;
	out->free = report_free;
	return 0;
}

/* The one create/feed/finish lifecycle of the analysis (cat/analysis/analysis.h): run.c makes it
 * for the outputs that show the model (report, html, chrome, export), and this stage, in front of
 * that output, feeds it every event the output gets and finishes it, with how reading ended, before
 * the output's own finish. The output only reads it.
 *
 * For an output that refreshes (ctp-cat --follow --report), the stage also judges the analysis
 * so far at each whole round of live snapshots: the model is the one being fed, not a copy. */
#include <errno.h>
#include <stdlib.h>

#include "cat/analysis/snapshot_watch.h"
#include "cat/cat.h"

struct stage {
	struct ctp_analysis *a;
	struct ctp_cat_output inner;
	struct ctp_trace_end end;
	bool have_end;
	struct ctp_snapshot_watch watch; /* used when inner.refresh */
};

/* Judges the model as it is now, a whole round of snapshots in it, and has the output show it. */
static int refresh(struct stage *s)
{
	ctp_snapshot_watch_taken(&s->watch);
	if (ctp_analysis_judge_so_far(s->a) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return s->inner.refresh(s->inner.state);
}

static int stage_event(void *state, const struct ctp_event *ev)
{
	struct stage *s = state;
	if (s->inner.refresh) {
		/* The round is over: judge it before a later event (which may show a process
		 * moved on) enters the model. */
		if (ctp_snapshot_watch_due(&s->watch) && !ctp_snapshot_watch_in_round(ev) &&
		    refresh(s) < 0)
			return -1;
		if (ctp_snapshot_watch_event(&s->watch, ev) < 0) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (ctp_analysis_add_event(s->a, ev) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return s->inner.event(s->inner.state, ev);
}

static int stage_idle(void *state)
{
	struct stage *s = state;
	if (s->inner.refresh && ctp_snapshot_watch_due(&s->watch) && refresh(s) < 0)
		return -1;
	return s->inner.idle ? s->inner.idle(s->inner.state) : 0;
}

static void stage_ended(void *state, const struct ctp_trace_end *end)
{
	struct stage *s = state;
	s->end = *end;
	s->have_end = true;
	if (s->inner.ended)
		s->inner.ended(s->inner.state, end);
}

static int stage_finish(void *state)
{
	struct stage *s = state;
	/* Not told how reading ended (--follow stopped at the end line): judge what was read. */
	if (ctp_analysis_finish(s->a, s->have_end ? &s->end : NULL) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return s->inner.finish(s->inner.state);
}

static int stage_status(void *state)
{
	struct stage *s = state;
	return s->inner.status ? s->inner.status(s->inner.state) : CTP_CAT_EXIT_OK;
}

static void stage_free(void *state)
{
	struct stage *s = state;
	s->inner.free(s->inner.state);
	ctp_analysis_free(s->a);
	ctp_snapshot_watch_free(&s->watch);
	free(s);
}

int ctp_cat_analysis_stage_open(struct ctp_cat_output *out, struct ctp_analysis *a,
				const struct ctp_cat_output *inner)
{
	struct stage *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->a = a;
	s->inner = *inner;
	*out = (struct ctp_cat_output){
		.state = s,
		.event = stage_event,
		.finish = stage_finish,
		.free = stage_free,
		.ended = stage_ended,
		.status = stage_status,
		.idle = stage_idle,
	};
	return 0;
}

/* The one create/feed/finish lifecycle of the analysis (cat/analysis/analysis.h): run.c makes it
 * for the outputs that show the model (report, html, chrome, export), and this stage, in front of
 * that output, feeds it every event the output gets and finishes it, with how reading ended, before
 * the output's own finish. The output only reads it. */
#include <errno.h>
#include <stdlib.h>

#include "cat/cat.h"

struct stage {
	struct ctp_analysis *a;
	struct ctp_cat_output inner;
	struct ctp_trace_end end;
	bool have_end;
};

static int stage_event(void *state, const struct ctp_event *ev)
{
	struct stage *s = state;
	if (ctp_analysis_add_event(s->a, ev) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return s->inner.event(s->inner.state, ev);
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
	};
	return 0;
}

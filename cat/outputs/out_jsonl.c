/* JSON Lines output: the trace's own lines, unchanged, so that tools see exactly what the
 * collector wrote. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/outputs/view.h"

struct out_jsonl {
	struct ctp_cat_view v;
};

static int jsonl_event(void *state, const struct ctp_event *ev)
{
	struct out_jsonl *o = state;
	const struct ctp_trace_line *line = ev->line;
	if (!line)
		return 0; /* derived from a format 1 trace: not one of its lines */
	if (fwrite_unlocked(line->text, 1, line->len, o->v.f) != line->len ||
	    putc_unlocked('\n', o->v.f) == EOF)
		return -1;
	return 0;
}

int ctp_cat_out_jsonl_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_jsonl *o = ctp_cat_view_new(sizeof(*o), f, false);
	if (!o)
		return -1;
	out->state = o;
	out->event = jsonl_event;
	out->finish = ctp_cat_view_finish;
	out->free = ctp_cat_view_free;
	out->lines_only = true;
	return 0;
}

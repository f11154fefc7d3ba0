/* JSON Lines output: the trace's own lines, unchanged, so that tools see exactly what the
 * collector wrote. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cat/cat.h"

#define OUT_BUFFER_SIZE (64u << 10)

struct out_jsonl {
	FILE *f;
};

static int jsonl_event(void *state, const struct ctp_event *ev)
{
	struct out_jsonl *o = state;
	const struct ctp_trace_line *line = ev->line;
	if (!line)
		return 0; /* derived from a format 1 trace: not one of its lines */
	if (fwrite_unlocked(line->text, 1, line->len, o->f) != line->len ||
	    putc_unlocked('\n', o->f) == EOF)
		return -1;
	return 0;
}

static int jsonl_finish(void *state)
{
	struct out_jsonl *o = state;
	return fflush(o->f) == 0 ? 0 : -1;
}

static void jsonl_free(void *state)
{
	free(state);
}

int ctp_cat_out_jsonl_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_jsonl *o = malloc(sizeof(*o));
	if (!o)
		return -1;
	o->f = f;
	/* Fewer write calls than stdio's default for a pipe; a terminal stays line-buffered. */
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	out->state = o;
	out->event = jsonl_event;
	out->finish = jsonl_finish;
	out->free = jsonl_free;
	out->lines_only = true;
	return 0;
}

/* `ctp-cat --html FILE`: the dashboard, one self-contained HTML page. Events go to the run's
 * analysis (through the stage in front) and to the dashboard's own collector as they are read;
 * at the end the page template is written with the style, the data and the script put in its
 * place. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/html/html.h"
#include "cat/html/outfile.h"

struct out_html {
	struct ctp_cat_outfile out; /* the page, put in place only once it is whole */
	const char *source;
	char *trace_tool; /* the header's `tool` */
	struct ctp_trace_end end;
	bool ended;
	const struct ctp_analysis *analysis; /* fed and finished by the run's analysis stage */
	struct ctp_html_collect collect;
};

static int html_event(void *state, const struct ctp_event *ev)
{
	struct out_html *o = state;
	if (ev->type == CTP_EV_TRACE && !o->trace_tool) {
		const char *tool = ev->trace.tool;
		if (tool && !(o->trace_tool = strdup(tool))) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (ctp_html_collect_event(&o->collect, ev) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The data goes inside a <script> element: no byte sequence in it may end that element or
 * open a comment there. '<', '>' and '&' occur in JSON only inside strings, where \u escapes
 * mean the same characters, so replacing them keeps the JSON as it was and makes "</script>"
 * impossible whatever a symbol or path holds. */
static int write_json_for_script(void *file, const char *s, size_t len)
{
	FILE *f = file;
	size_t from = 0;
	for (size_t i = 0; i < len; i++) {
		const char *esc = s[i] == '<'	? "\\u003c"
				  : s[i] == '>' ? "\\u003e"
				  : s[i] == '&' ? "\\u0026"
						: NULL;
		if (!esc)
			continue;
		if (fwrite(s + from, 1, i - from, f) != i - from || fputs(esc, f) == EOF)
			return -1;
		from = i + 1;
	}
	return fwrite(s + from, 1, len - from, f) == len - from ? 0 : -1;
}

/* Writes the template up to `marker`, and moves `*at` past it. */
static int write_until(FILE *f, const char **at, const char *marker)
{
	const char *m = strstr(*at, marker);
	if (!m) {
		errno = EINVAL; /* a broken build: the markers are checked by embed.cmake */
		return -1;
	}
	size_t n = (size_t)(m - *at);
	if (fwrite(*at, 1, n, f) != n)
		return -1;
	*at = m + strlen(marker);
	return 0;
}

/* The page: the template with the style, the data (written as it is made) and the script in
 * place. 0, or -1 with errno set. */
static int write_page(struct out_html *o, const struct ctp_trace_end *end)
{
	FILE *f = o->out.f;
	const char *at = ctp_html_template;
	if (write_until(f, &at, "@CTP_STYLE@") < 0 || fputs(ctp_html_style, f) == EOF ||
	    write_until(f, &at, "@CTP_DATA@") < 0 ||
	    ctp_html_data_write(o->analysis, &o->collect, o->source, end, o->trace_tool,
				write_json_for_script, f) < 0 ||
	    write_until(f, &at, "@CTP_SCRIPT@") < 0 || fputs(ctp_html_script, f) == EOF ||
	    fputs(at, f) == EOF)
		return -1;
	return 0;
}

static int html_finish(void *state)
{
	struct out_html *o = state;
	const struct ctp_trace_end *end = o->ended ? &o->end : NULL;
	if (end && (end->kind == CTP_TRACE_NOT_TRACE || end->kind == CTP_TRACE_IO_ERROR)) {
		/* Nothing to show: the reader says why, and no empty page is left behind. */
		ctp_cat_outfile_abandon(&o->out);
		return 0;
	}
	if (write_page(o, end) < 0) {
		int saved = errno;
		ctp_cat_outfile_abandon(&o->out); /* no half page that looks whole */
		errno = saved;
		return -1;
	}
	return ctp_cat_outfile_commit(&o->out);
}

static void html_ended(void *state, const struct ctp_trace_end *end)
{
	struct out_html *o = state;
	o->end = *end;
	o->ended = true;
}

static void html_free(void *state)
{
	struct out_html *o = state;
	ctp_cat_outfile_abandon(&o->out); /* reading failed before the end: no page */
	free(o->trace_tool);
	ctp_html_collect_free(&o->collect);
	free(o);
}

int ctp_cat_out_html_open(struct ctp_cat_output *out, const struct ctp_cat_options *opt,
			  const struct ctp_analysis *a)
{
	const char *source = strcmp(opt->input, "-") == 0 ? "standard input" : opt->input;
	struct out_html *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	const char *slash = strrchr(source, '/');
	o->source = slash ? slash + 1 : source;
	o->analysis = a;
	ctp_html_collect_init(&o->collect, a);
	if (ctp_cat_outfile_open(&o->out, opt->html_path) < 0) {
		int saved = errno;
		html_free(o);
		errno = saved;
		return -1;
	}
	out->state = o;
	out->event = html_event;
	out->finish = html_finish;
	out->free = html_free;
	out->ended = html_ended;
	return 0;
}

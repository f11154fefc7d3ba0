/* The read loop: every line of the trace to the output, and what went wrong to stderr, in the
 * words --help and docs/trace-format.md use. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/model/resymbolize.h"
#include "cat/follow.h"
#include "cat/trace_writer.h"
#include "cat/progress.h"

/* Past this many bad lines, stop naming each: a garbled trace must not bury the summary. */
#define BAD_LINES_SHOWN 20

static const char *display_name(const char *input)
{
	return strcmp(input, "-") == 0 ? "(standard input)" : input;
}

/* The outputs that show the model share the run's one analysis (cat/analysis/analysis_stage.c). */
static bool shows_model(enum ctp_cat_format format)
{
	switch (format) {
	case CTP_CAT_FORMAT_CHROME:
	case CTP_CAT_FORMAT_SQLITE:
	case CTP_CAT_FORMAT_POSTGRES:
	case CTP_CAT_FORMAT_MYSQL:
	case CTP_CAT_FORMAT_REPORT:
	case CTP_CAT_FORMAT_REPORT_JSON:
	case CTP_CAT_FORMAT_HTML:
		return true;
	default:
		return false;
	}
}

/* What the output writes to, for its error: the page, or standard output (an export says its
 * own errors, and its target may hold a password). */
static const char *output_name(const struct ctp_cat_options *opt)
{
	return opt->format == CTP_CAT_FORMAT_HTML ? opt->html_path : "standard output";
}

static int open_output(const struct ctp_cat_options *opt, struct ctp_cat_output *out,
		       const struct ctp_analysis *a)
{
	switch (opt->format) {
	case CTP_CAT_FORMAT_JSONL:
		return ctp_cat_out_jsonl_open(out, stdout);
	case CTP_CAT_FORMAT_TEXT:
		return ctp_cat_out_text_open(out, stdout, opt->full_names);
	case CTP_CAT_FORMAT_CSV:
		return ctp_cat_out_csv_open(out, stdout);
	case CTP_CAT_FORMAT_COROTRACER:
		return ctp_cat_out_corotracer_open(out, stdout);
	case CTP_CAT_FORMAT_CHROME:
		return ctp_cat_out_chrome_open(out, stdout, a);
	case CTP_CAT_FORMAT_PERFETTO:
		return ctp_cat_out_perfetto_open(out, stdout);
	case CTP_CAT_FORMAT_SQLITE:
	case CTP_CAT_FORMAT_POSTGRES:
	case CTP_CAT_FORMAT_MYSQL:
		return ctp_cat_out_export_open(out, opt, a);
	case CTP_CAT_FORMAT_REPORT:
	case CTP_CAT_FORMAT_REPORT_JSON:
		return ctp_cat_out_report_open(out, stdout, opt, a);
	case CTP_CAT_FORMAT_HTML:
		return ctp_cat_out_html_open(out, opt, a);
	}
	errno = EINVAL;
	return -1;
}

/* The output, behind the analysis stage when it shows the model, behind the filters when any
 * is asked for. */
static int open_filtered_output(const struct ctp_cat_options *opt, struct ctp_cat_output *out)
{
	struct ctp_analysis *a = NULL;
	if (shows_model(opt->format) && !(a = ctp_analysis_new(&opt->analysis))) {
		errno = ENOMEM;
		return -1;
	}
	if (open_output(opt, out, a) < 0) {
		ctp_analysis_free(a);
		return -1;
	}
	if (a) {
		struct ctp_cat_output inner = *out;
		if (ctp_cat_analysis_stage_open(out, a, &inner) < 0) {
			inner.free(inner.state);
			ctp_analysis_free(a);
			errno = ENOMEM;
			return -1;
		}
	}
	if (!ctp_cat_filter_active(&opt->filter))
		return 0;
	struct ctp_cat_output inner = *out;
	if (ctp_cat_filter_open(out, &opt->filter, &inner) < 0) {
		inner.free(inner.state);
		return -1;
	}
	return 0;
}

/* Decodes one line (once) and hands its events to the output: first an event the decoder
 * derived (a format 1 trace's coroutine end), then the line's own. An output that reads only
 * lines gets them undecoded: plain JSON Lines streams at the speed of reading. */
static int feed(struct ctp_event_decoder *d, const struct ctp_cat_output *out,
		const struct ctp_trace_line *line, enum ctp_event_type *type)
{
	struct ctp_event ev;
	if (out->lines_only) {
		ev = (struct ctp_event){.line = line, .type_name = ""};
		*type = CTP_EV_UNKNOWN;
		return out->event(out->state, &ev);
	}
	if (ctp_event_decode(d, line, &ev) < 0)
		return -1;
	*type = ev.type;
	const struct ctp_event *derived = ctp_event_derived(d);
	if (derived && out->event(out->state, derived) < 0)
		return -1;
	return out->event(out->state, &ev);
}

/* Checks the collector's `end` line against what was read: the trace is whole only when the
 * line is there and every line it counts was read (a full disk leaves lines out). */
static int report_end_line(const char *name, const struct ctp_trace_end *end)
{
	if (!end->end_line) {
		/* Whole frames, but the collector never wrote its last line. */
		fprintf(stderr,
			"ctp-cat: %s: trace has no end line: the collector did not finish\n", name);
		return CTP_CAT_EXIT_INCOMPLETE;
	}
	uint64_t missing = ctp_trace_end_missing(end), uncounted = ctp_trace_end_uncounted(end);
	if (end->end_unwritten)
		fprintf(stderr,
			"ctp-cat: %s: the collector could not write %" PRIu64
			" lines (a write error: full disk?): the trace is incomplete\n",
			name, end->end_unwritten);
	if (missing > end->end_unwritten || uncounted)
		fprintf(stderr,
			"ctp-cat: %s: the end line counts %" PRIu64 " lines before it, %" PRIu64
			" were read: the trace is incomplete\n",
			name, end->end_lines, end->lines_before_end);
	return missing || uncounted ? CTP_CAT_EXIT_INCOMPLETE : CTP_CAT_EXIT_OK;
}

/* A trace that stops short while a process still writes it (its collector, at work or waiting
 * for more processes: the plain form's waits 2 s after the last) is not damaged: say so. */
static bool still_written(const char *input, const struct ctp_trace_end *end)
{
	return end->unfinished && strcmp(input, "-") != 0 &&
	       ctp_cat_trace_writer_at(input) == CTP_CAT_WRITER_PRESENT;
}

/* Says how reading ended and turns it into the exit code. */
static int report_end(const char *input, const struct ctp_trace_end *end)
{
	const char *name = display_name(input);
	if (still_written(input, end)) {
		fprintf(stderr,
			"ctp-cat: %s: still being written: %" PRIu64
			" lines so far, no end line yet (ctp-cat -f reads it to its end)\n",
			name, end->lines);
		return CTP_CAT_EXIT_INCOMPLETE;
	}
	switch (end->kind) {
	case CTP_TRACE_COMPLETE:
		break;
	case CTP_TRACE_TRUNCATED:
		fprintf(stderr,
			"ctp-cat: %s: trace cut off at byte %" PRIu64
			" (last complete frame ends at byte %" PRIu64 "); %" PRIu64 " lines read\n",
			name, end->input_bytes, end->frame_end, end->lines);
		return CTP_CAT_EXIT_INCOMPLETE;
	case CTP_TRACE_CORRUPT:
		fprintf(stderr,
			"ctp-cat: %s: damaged zstd data after byte %" PRIu64 " (%s); %" PRIu64
			" lines read\n",
			name, end->frame_end, end->why, end->lines);
		return CTP_CAT_EXIT_INCOMPLETE;
	case CTP_TRACE_NOT_TRACE:
		fprintf(stderr, "ctp-cat: %s: not a ctp trace (%s)\n", name, end->why);
		return CTP_CAT_EXIT_FAILURE;
	case CTP_TRACE_IO_ERROR:
		fprintf(stderr, "ctp-cat: %s: read error: %s\n", name, end->why);
		return CTP_CAT_EXIT_FAILURE;
	case CTP_TRACE_TRAILING:
		fprintf(stderr, "ctp-cat: %s: %s; the rest is not read\n", name, end->why);
		return CTP_CAT_EXIT_INCOMPLETE;
	}
	if (end->bad_lines > BAD_LINES_SHOWN)
		fprintf(stderr, "ctp-cat: %s: %" PRIu64 " bad lines skipped in all\n", name,
			end->bad_lines);
	int status = report_end_line(name, end);
	return status == CTP_CAT_EXIT_OK && end->bad_lines ? CTP_CAT_EXIT_INCOMPLETE : status;
}

int ctp_cat_run(const struct ctp_cat_options *opt)
{
	const char *name = display_name(opt->input);
	struct ctp_cat_follow *follow = NULL;
	bool saw_end = false; /* following stopped at the trace's `end` line */
	struct ctp_trace_reader *r =
		opt->follow ? ctp_cat_follow_open(opt->input, opt->snapshot_every_ns, &follow)
			    : ctp_trace_reader_open(opt->input);
	if (!r) {
		fprintf(stderr, "ctp-cat: %s: cannot open: %s\n", name, strerror(errno));
		return CTP_CAT_EXIT_FAILURE;
	}
	/* The header first: an input that is no trace must not touch the output (an --html page
	 * or a database of the same name stays as it was). */
	struct ctp_trace_line line;
	enum ctp_trace_item item = ctp_trace_reader_next(r, &line);
	if (item == CTP_TRACE_END) {
		int status = report_end(opt->input, ctp_trace_reader_end(r));
		ctp_trace_reader_free(r);
		ctp_cat_follow_close(follow);
		return status;
	}
	struct ctp_cat_output out = {0};
	if (open_filtered_output(opt, &out) < 0) {
		if (errno != ECANCELED)
			fprintf(stderr, "ctp-cat: cannot set up the output: %s\n", strerror(errno));
		ctp_trace_reader_free(r);
		ctp_cat_follow_close(follow);
		return CTP_CAT_EXIT_FAILURE;
	}

	int status = CTP_CAT_EXIT_OK;
	bool output_failed = false;
	struct ctp_event_decoder decoder;
	ctp_event_decoder_init(&decoder);
	/* Names the trace left out (a stripped program) are looked up again where it can be. */
	struct ctp_resym *resym = ctp_resym_attach(&decoder);
	struct ctp_cat_progress progress = {0};
	if (!follow)
		ctp_cat_progress_start(&progress, opt->input, name);
	for (; item != CTP_TRACE_END; item = ctp_trace_reader_next(r, &line)) {
		if (item == CTP_TRACE_BAD_LINE) {
			uint64_t bad = ctp_trace_reader_end(r)->bad_lines;
			if (bad <= BAD_LINES_SHOWN)
				fprintf(stderr, "ctp-cat: %s: line %" PRIu64 ": %s; skipped\n",
					name, line.number, line.error);
			if (bad == BAD_LINES_SHOWN)
				fprintf(stderr, "ctp-cat: %s: further bad lines are only counted\n",
					name);
			status = CTP_CAT_EXIT_INCOMPLETE;
			continue;
		}
		ctp_cat_progress_tick(&progress, r, line.number);
		enum ctp_event_type type;
		if (feed(&decoder, &out, &line, &type) < 0) {
			output_failed = true;
			break;
		}
		if (follow) {
			/* Nothing more to read now: show what was read (a live report is due
			 * here), without waiting for the trace to grow. */
			if (ctp_cat_follow_idle(follow) && !ctp_trace_reader_pending(r)) {
				if (out.idle && out.idle(out.state) < 0) {
					output_failed = true;
					break;
				}
				fflush(stdout);
			}
			if (type == CTP_EV_END || ctp_trace_reader_end(r)->end_line) {
				saw_end = true;
				break;
			}
		}
	}
	ctp_cat_progress_end(&progress);
	if (!output_failed && out.ended)
		out.ended(out.state, ctp_trace_reader_end(r));
	if (!output_failed && out.finish(out.state) < 0)
		output_failed = true;

	if (output_failed) {
		/* The reader of our output is gone (`ctp-cat t | head`): it has what it wanted.
		 * Stop quietly with what was seen so far; the rest was not read, so not judged. */
		if (errno == ECANCELED) {
			status = CTP_CAT_EXIT_FAILURE;
		} else if (errno != EPIPE) {
			fprintf(stderr, "ctp-cat: cannot write %s: %s\n", output_name(opt),
				strerror(errno));
			status = CTP_CAT_EXIT_FAILURE;
		}
	} else if (!(follow && ctp_cat_follow_interrupted() &&
		     ctp_trace_reader_end(r)->kind == CTP_TRACE_TRUNCATED)) {
		/* (Ctrl-C while following cuts the input mid-frame: that is no damage.) Following
		 * stops at the end line, before the reader has reached the end of its input. */
		int end_status = saw_end ? report_end_line(name, ctp_trace_reader_end(r))
					 : report_end(opt->input, ctp_trace_reader_end(r));
		if (end_status > status)
			status = end_status;
		/* The output's own verdict (--report: findings that fail, 3), unless the trace
		 * could not be read at all. */
		int out_status = out.status ? out.status(out.state) : CTP_CAT_EXIT_OK;
		if (status != CTP_CAT_EXIT_FAILURE && out_status > status)
			status = out_status;
	}
	out.free(out.state);
	ctp_event_decoder_free(&decoder);
	ctp_resym_free(resym);
	ctp_trace_reader_free(r);
	ctp_cat_follow_close(follow);
	return status;
}

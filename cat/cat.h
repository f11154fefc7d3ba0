/* ctp-cat's parts: options (main.c), the read loop (run.c), and one file per output format. */
#ifndef CTP_CAT_H
#define CTP_CAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cat/analysis/analysis.h"
#include "cat/model/event.h"
#include "cat/outputs/filter.h"
#include "cat/reader/trace_reader.h"

/* Exit codes, as --help documents them. */
enum {
	CTP_CAT_EXIT_OK = 0,	     /* the trace was read whole */
	CTP_CAT_EXIT_INCOMPLETE = 1, /* readable, but cut off, damaged at the end, or bad lines */
	CTP_CAT_EXIT_FAILURE = 2,    /* not a trace, usage error, I/O error */
	CTP_CAT_EXIT_FINDINGS = 3,   /* --report: a crash, lost wakeup or missed readiness */
};

enum ctp_cat_format {
	CTP_CAT_FORMAT_JSONL,
	CTP_CAT_FORMAT_TEXT, /* the views: cat/outputs/out_text.c, out_csv.c, ... */
	CTP_CAT_FORMAT_CSV,
	CTP_CAT_FORMAT_COROTRACER,
	CTP_CAT_FORMAT_CHROME,
	CTP_CAT_FORMAT_PERFETTO, /* cat/outputs/out_perfetto.c */
	CTP_CAT_FORMAT_SQLITE,	 /* export into a database (cat/export/export.h) */
	CTP_CAT_FORMAT_POSTGRES,
	CTP_CAT_FORMAT_MYSQL,
	CTP_CAT_FORMAT_REPORT, /* --report: findings for people (cat/analysis/report.c) */
	CTP_CAT_FORMAT_REPORT_JSON,
	CTP_CAT_FORMAT_HTML, /* --html: the dashboard page (cat/html/out_html.c) */
};

/* What the command line asked for. */
struct ctp_cat_options {
	const char *input; /* a path, or "-" for standard input */
	enum ctp_cat_format format;
	/* The views: --pid, --coro, --tid, --type, --since, --until (cat/outputs/filter.h);
	 * --follow. */
	struct ctp_cat_filter_spec filter;
	bool follow;
	uint64_t snapshot_every_ns; /* --snapshot-every: with --follow, ask for snapshots (0: no) */
	const char *export_target;  /* the database file or URI of an export */
	bool export_replace;	    /* an export may replace the same trace exported before */
	struct ctp_analysis_options analysis; /* --report's thresholds */
	const char *html_path;		      /* --html: the page to write */
	bool full_names; /* --full-names: the text report and view keep C++ template arguments */
};

/* Where the trace's events go (cat/model/event.h: each line decoded once, and the ends a format
 * 1 trace leaves to derive). `event` and `finish` return 0, or -1 with errno set when the output
 * failed (EPIPE: the reader of our output went away; ECANCELED: the output has said why on
 * stderr). */
struct ctp_cat_output {
	void *state;
	int (*event)(void *state, const struct ctp_event *ev);
	int (*finish)(void *state);
	void (*free)(void *state);
	/* Optional: how reading ended, told before finish when the trace was read to its end. */
	void (*ended)(void *state, const struct ctp_trace_end *end);
	/* Optional: an exit status of the output's own after finish (--report's findings). */
	int (*status)(void *state);
	/* Optional, when following: the reader has nothing more right now (it would wait for the
	 * trace to grow). 0, or -1 with errno set as for `event`. */
	int (*idle)(void *state);
	/* Optional (--follow --report): the run's analysis was just judged on a whole round of
	 * live snapshots (cat/analysis/snapshot_watch.h): show it. Called by the analysis stage.
	 * 0, or -1 with errno set as for `event`. */
	int (*refresh)(void *state);
	/* The output reads nothing of an event but its line (plain JSON Lines): the read loop
	 * then hands on each line undecoded, and no derived event. */
	bool lines_only;
};

/* JSON Lines, each line passed through byte for byte (derived events have no line: none). */
int ctp_cat_out_jsonl_open(struct ctp_cat_output *out, FILE *f);

/* The views (docs/ctp-cat.md): aligned text for people, CSV rows of switches, coroTracer's
 * records, Chrome Trace Event JSON. */
int ctp_cat_out_text_open(struct ctp_cat_output *out, FILE *f, bool full_names);
int ctp_cat_out_csv_open(struct ctp_cat_output *out, FILE *f);
int ctp_cat_out_corotracer_open(struct ctp_cat_output *out, FILE *f);
/* Perfetto's protobuf trace format (out_perfetto.c). */
int ctp_cat_out_perfetto_open(struct ctp_cat_output *out, FILE *f);

/* The outputs that show the model take the run's one analysis (cat/analysis/analysis_stage.c feeds
 * it each event before they get it, and finishes it before their `finish`). */
int ctp_cat_out_chrome_open(struct ctp_cat_output *out, FILE *f, const struct ctp_analysis *a);

/* --report: the analysis's findings as text or JSON (cat/analysis/out_report.c). */
int ctp_cat_out_report_open(struct ctp_cat_output *out, FILE *f, const struct ctp_cat_options *opt,
			    const struct ctp_analysis *a);

/* --html: the dashboard, one self-contained page written to opt->html_path (docs/dashboard.md). */
int ctp_cat_out_html_open(struct ctp_cat_output *out, const struct ctp_cat_options *opt,
			  const struct ctp_analysis *a);

/* An export into the database the options name (cat/export/export_session.c). */
int ctp_cat_out_export_open(struct ctp_cat_output *out, const struct ctp_cat_options *opt,
			    const struct ctp_analysis *a);

/* Makes `out` feed `a` (which it then owns) each event before `inner` gets it, and finish it
 * before inner's finish: the one lifecycle of the run's analysis. When inner has `refresh`, it
 * also judges `a` at each whole round of live snapshots (when reading goes idle, or before the
 * first event after the round) and calls it. -1 when out of memory (inner and a are then not
 * taken). */
int ctp_cat_analysis_stage_open(struct ctp_cat_output *out, struct ctp_analysis *a,
				const struct ctp_cat_output *inner);

/* Prints the export schema's DDL for "sqlite", "postgres" or "mysql"; returns the exit code. */
int ctp_cat_print_schema(const char *database, FILE *f);

/* Reads the trace the options name into the output they ask for; returns the exit code. */
int ctp_cat_run(const struct ctp_cat_options *opt);

#endif

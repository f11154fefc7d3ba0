/* `ctp-cat --report`: the analysis (cat/analysis/analysis.h) written for people (report.c) or as
 * JSON (report_json.c), both showing frames alike (report_frames.c); out_report.c is the output the
 * read loop feeds. docs/report.md describes both. */
#ifndef CTP_CAT_REPORT_H
#define CTP_CAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cat/analysis/analysis.h"

/* Which report of a followed trace this is (ctp-cat --follow --report, docs/report.md). */
struct ctp_cat_report_refresh {
	uint64_t number;      /* 1 for the first report */
	bool final;	      /* the one at the end of following */
	uint64_t snapshot_ts; /* the latest snapshot in it, 0: none */
};

/* The report of a finished analysis of the trace `name`. Return 0, or -1 with errno set when
 * writing failed. The text report shortens C++ template arguments unless full_names; the JSON
 * report always has the full names. It is indented for people, unless `refresh` (NULL: none)
 * asks for one line of JSON Lines, which then also says which report it is. */
int ctp_cat_report_text(FILE *f, const struct ctp_analysis *a, const char *name, bool full_names);
int ctp_cat_report_json(FILE *f, const struct ctp_analysis *a, const char *name,
			const struct ctp_cat_report_refresh *refresh);

/* "SIGSEGV" for 11 (a buffer of the calling thread's, valid until its next call). */
const char *ctp_cat_report_signal_name(int sig);

/* Whether reports show frame `i` of `s`: the program's frames, not the tracer's — unless the
 * stack has nothing else. */
bool ctp_cat_report_shows_frame(const struct ctp_analysis_stack *s, size_t i);

#endif

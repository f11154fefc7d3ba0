/* `ctp-cat --report`: the analysis (cat/analysis/analysis.h) written for people (report.c) or as
 * JSON (report_json.c), both showing frames alike (report_frames.c); out_report.c is the output the
 * read loop feeds. docs/report.md describes both. */
#ifndef CTP_CAT_REPORT_H
#define CTP_CAT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cat/analysis/analysis.h"

/* The report of a finished analysis of the trace `name`. Return 0, or -1 with errno set when
 * writing failed. The text report shortens C++ template arguments unless full_names; the JSON
 * report always has the full names. */
int ctp_cat_report_text(FILE *f, const struct ctp_analysis *a, const char *name, bool full_names);
int ctp_cat_report_json(FILE *f, const struct ctp_analysis *a, const char *name);

/* Writes a symbol for people: `full` as it is, else with each outermost template argument list
 * written as <...> ("std::vector<...>::push_back(int const&)"); operators such as operator<<
 * are kept. */
void ctp_cat_report_put_name(FILE *f, const char *name, bool full);

/* "SIGSEGV" for 11 (a buffer of the calling thread's, valid until its next call). */
const char *ctp_cat_report_signal_name(int sig);

/* Whether reports show frame `i` of `s`: the program's frames, not the tracer's — unless the
 * stack has nothing else. */
bool ctp_cat_report_shows_frame(const struct ctp_analysis_stack *s, size_t i);

#endif

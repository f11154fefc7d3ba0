/* ctp-pstack --report: the report's analysis on the snapshot. ctp-pstack writes the snapshot as
 * a trace into a pipe and ctp-cat --report reads it from its standard input: the analysis lives
 * in ctp-cat alone, and the `snapshot` line tells it that the states are exact at that moment. */
#ifndef CTP_PSTACK_REPORT_H
#define CTP_PSTACK_REPORT_H

#include <stdbool.h>

#include "pstack/procinfo.h"
#include "pstack/view.h"

/* Runs ctp-cat --report (with --json when `json`, else with --full-names when the view asks for
 * them) on the snapshot and returns its exit status
 * (0 nothing to report, 3 findings; docs/report.md), or -1 when it could not be run (said on
 * stderr). */
int pstack_report(struct pstack_view *v, const struct pstack_procinfo *pi, bool json);

#endif

#define _GNU_SOURCE /* sigabbrev_np */
/* What both reports (text and JSON) show the same way: which frames are the program's, and a
 * signal's name. */
#include <signal.h>
#include <stdio.h>

#include "cat/analysis/report.h"

bool ctp_cat_report_shows_frame(const struct ctp_analysis_stack *s, size_t i)
{
	if (!ctp_analysis_tracer_frame(&s->frames[i]))
		return true;
	for (size_t k = 0; k < s->nframes; k++)
		if (!ctp_analysis_tracer_frame(&s->frames[k]))
			return false;
	return true;
}

const char *ctp_cat_report_signal_name(int sig)
{
	static __thread char buf[24];
	const char *abbrev = sigabbrev_np(sig);
	snprintf(buf, sizeof(buf), "SIG%s", abbrev ? abbrev : "?");
	return buf;
}

#define _GNU_SOURCE /* sigabbrev_np */
/* What both reports (text and JSON) show the same way: which frames are the program's, and a
 * signal's name; and how the text report shortens C++ names. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

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

/* The length of the operator that starts at s ("operator<<", "operator->", ...), whose angle
 * brackets are no template's; 0 when s starts no such operator. */
static size_t angle_operator_length(const char *s)
{
	static const char *const ops[] = {
		"operator<=>", "operator<<=", "operator>>=", "operator<<",
		"operator>>",  "operator<=",  "operator>=",  "operator->*",
		"operator->",  "operator<",   "operator>"};
	if (strncmp(s, "operator", 8) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(s, ops[i], strlen(ops[i])) == 0)
			return strlen(ops[i]);
	return 0;
}

void ctp_cat_report_put_name(FILE *f, const char *name, bool full)
{
	if (full) {
		fputs(name, f);
		return;
	}
	/* Template arguments make most of a long C++ name (an Asio frame reaches thousands of
	 * characters): each outermost <...> is written as <...>, the rest as it is. */
	size_t depth = 0;
	for (const char *s = name; *s;) {
		size_t op = depth ? 0 : angle_operator_length(s);
		if (op) {
			fwrite(s, 1, op, f);
			s += op;
			continue;
		}
		if (s[0] == '-' && s[1] == '>') { /* an arrow inside decltype(), not a bracket */
			if (!depth)
				fputs("->", f);
			s += 2;
			continue;
		}
		if (*s == '<' && depth++ == 0)
			fputs("<...", f);
		else if (*s == '>' && depth && --depth == 0)
			fputc('>', f);
		else if (!depth)
			fputc(*s, f);
		s++;
	}
}

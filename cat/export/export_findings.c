/* The analysis's findings (cat/analysis/analysis.h) as rows: one per finding, and one per member of
 * a group finding (stuck, leak). Zero ids, -1 fds and the like, which the analysis uses for "none",
 * become NULL. */
#include <stdio.h>
#include <string.h>

#include "cat/analysis/analysis.h"
#include "cat/export/export.h"

static struct ctp_export_value null_value(void)
{
	return (struct ctp_export_value){.kind = CTP_EXPORT_NULL};
}

static struct ctp_export_value int_value(int64_t i)
{
	return (struct ctp_export_value){.kind = CTP_EXPORT_INTEGER, .i = i};
}

static struct ctp_export_value nonzero(uint64_t v)
{
	return v ? int_value((int64_t)v) : null_value();
}

static struct ctp_export_value fd_value(int fd)
{
	return fd >= 0 ? int_value(fd) : null_value();
}

static struct ctp_export_value text_value(const char *s)
{
	if (!s)
		return null_value();
	return (struct ctp_export_value){.kind = CTP_EXPORT_STRING, .s = s, .len = strlen(s)};
}

int ctp_export_findings_rows(const struct ctp_analysis *a, int64_t trace_id,
			     ctp_export_emit_fn emit, void *ctx)
{
	struct ctp_export_value row[CTP_EXPORT_MAX_COLUMNS];
	size_t n = ctp_analysis_finding_count(a);
	for (size_t i = 0; i < n; i++) {
		const struct ctp_finding *f = ctp_analysis_finding_at(a, i);
		char addr[24];
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->addr);
		unsigned c = 0;
		row[c++] = int_value(trace_id);
		row[c++] = int_value((int64_t)i);
		row[c++] = text_value(ctp_finding_kind_name(f->kind));
		row[c++] = int_value(f->pid);
		row[c++] = nonzero(f->coro);
		row[c++] = fd_value(f->fd);
		row[c++] = text_value(f->op);
		row[c++] = nonzero(f->stack);
		row[c++] = nonzero(f->ts);
		row[c++] = int_value((int64_t)f->duration_ns);
		row[c++] = int_value(f->at_end);
		row[c++] = nonzero(f->close_ts);
		row[c++] = nonzero(f->close_coro);
		row[c++] = nonzero(f->close_tid);
		row[c++] = nonzero(f->close_stack);
		row[c++] = f->kind == CTP_FINDING_CRASH ? int_value(f->signal) : null_value();
		row[c++] = nonzero(f->tid);
		row[c++] = f->addr ? text_value(addr) : null_value();
		row[c++] = int_value((int64_t)f->count);
		row[c++] = int_value(f->uncertain);
		int rc = emit(ctx, CTP_EXPORT_FINDINGS, row);
		for (size_t m = 0; m < f->count && rc == 0; m++) {
			row[0] = int_value(trace_id);
			row[1] = int_value((int64_t)i);
			row[2] = f->coros ? nonzero(f->coros[m]) : null_value();
			row[3] = f->fds ? fd_value(f->fds[m]) : null_value();
			rc = emit(ctx, CTP_EXPORT_FINDING_MEMBERS, row);
		}
		if (rc)
			return rc;
	}
	return 0;
}

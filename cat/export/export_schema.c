/* The export schema, defined once: tables, columns (export_rows.c fills them, in this order, from
 * the decoded events), and the indexes. The DDL of each database is generated from it, so the three
 * can never disagree on a name or an order. docs/schema.md explains every column. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cat/export/export.h"

#define INT CTP_EXPORT_INT
#define TEXT CTP_EXPORT_TEXT
#define KEY CTP_EXPORT_KEY
#define TRACE_ID                                                                                   \
	{                                                                                          \
		"trace_id", INT                                                                    \
	}
#define COLS(...)                                                                                  \
	(const struct ctp_export_column[])                                                         \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define NCOLS(...) (sizeof(COLS(__VA_ARGS__)) / sizeof(struct ctp_export_column))
#define TABLE(tname, ...)                                                                          \
	{                                                                                          \
		.name = tname, .ncols = NCOLS(__VA_ARGS__), .cols = COLS(__VA_ARGS__)              \
	}

/* Column names avoid every word one of the three databases reserves (from, to, signal, lines,
 * offset), so that no statement needs quoted identifiers. A column added to a table goes at its
 * end: a database made by an earlier version gets it by ALTER TABLE ... ADD COLUMN, which
 * appends (ctp_export_sql_add_column). */
const struct ctp_export_table_def ctp_export_tables[CTP_EXPORT_NTABLES] = {
	[CTP_EXPORT_TRACES] = TABLE("traces", TRACE_ID, {"identity", KEY}, {"file", TEXT},
				    {"tool", TEXT}, {"format_version", INT}, {"start_ns", INT},
				    {"exported_at", INT}, {"line_count", INT}, {"end_state", TEXT}),
	[CTP_EXPORT_PROCESSES] =
		TABLE("processes", TRACE_ID, {"pid", INT}, {"ppid", INT}, {"exe", TEXT}),
	[CTP_EXPORT_PROCESS_ARGS] =
		TABLE("process_args", TRACE_ID, {"pid", INT}, {"idx", INT}, {"arg", TEXT}),
	[CTP_EXPORT_PROCESS_EXITS] =
		TABLE("process_exits", TRACE_ID, {"pid", INT}, {"status", INT}, {"signo", INT},
		      {"tid", INT}, {"coro", INT}, {"addr", TEXT}, {"ts", INT}),
	[CTP_EXPORT_COROUTINES] = TABLE("coroutines", TRACE_ID, {"pid", INT}, {"coro", INT},
					{"kind", TEXT}, {"entry", TEXT}, {"entry_addr", TEXT},
					{"parent", INT}, {"tid", INT}, {"ts", INT}, {"stack", INT}),
	[CTP_EXPORT_SWITCHES] =
		TABLE("switches", TRACE_ID, {"pid", INT}, {"tid", INT}, {"ts", INT},
		      {"from_coro", INT}, {"to_coro", INT}, {"how", TEXT}, {"stack", INT}),
	[CTP_EXPORT_STACKS] =
		TABLE("stacks", TRACE_ID, {"pid", INT}, {"stack", INT}, {"depth", INT}),
	/* Filled from each element of a stack line's frames. */
	[CTP_EXPORT_FRAMES] = TABLE("frames", TRACE_ID, {"pid", INT}, {"stack", INT}, {"idx", INT},
				    {"addr", TEXT}, {"sym", TEXT}, {"sym_off", INT},
				    {"module", TEXT}, {"file", TEXT}, {"line_no", INT}),
	/* A `module` line: what names a frame again after the run, and places one without a
	 * name in its file (addr - bias). */
	[CTP_EXPORT_MODULES] =
		TABLE("modules", TRACE_ID, {"pid", INT}, {"path", TEXT}, {"build_id", TEXT},
		      {"bias", TEXT}, {"lo", TEXT}, {"hi", TEXT}),
	[CTP_EXPORT_FD_EVENTS] =
		TABLE("fd_events", TRACE_ID, {"pid", INT}, {"tid", INT}, {"ts", INT}, {"coro", INT},
		      {"fd", INT}, {"event", TEXT}, {"op", TEXT}, {"waiter", INT}, {"stack", INT}),
	/* A `coro_end` line: how a coroutine ended (format 2; a format 1 trace has none to
	 * export). */
	[CTP_EXPORT_CORO_ENDS] =
		TABLE("coro_ends", TRACE_ID, {"pid", INT}, {"coro", INT}, {"tid", INT}, {"ts", INT},
		      {"how", TEXT}, {"switch_how", TEXT}),
	[CTP_EXPORT_FINAL_STATES] =
		TABLE("final_states", TRACE_ID, {"pid", INT}, {"coro", INT}, {"state", TEXT},
		      {"tid", INT}, {"since", INT}, {"stack", INT}, {"switches", INT},
		      {"wait_fd", INT}, {"wait_op", TEXT}),
	/* A live snapshot (a `snapshot` line) and the `state` lines it counts: a look at a running
	 * process, kept apart from the final states. */
	[CTP_EXPORT_SNAPSHOTS] = TABLE("snapshots", TRACE_ID, {"snapshot", INT}, {"pid", INT},
				       {"ts", INT}, {"states", INT}),
	[CTP_EXPORT_SNAPSHOT_STATES] =
		TABLE("snapshot_states", TRACE_ID, {"snapshot", INT}, {"pid", INT}, {"coro", INT},
		      {"state", TEXT}, {"tid", INT}, {"since", INT}, {"stack", INT},
		      {"switches", INT}, {"wait_fd", INT}, {"wait_op", TEXT}),
	[CTP_EXPORT_LOSSES] =
		TABLE("losses", TRACE_ID, {"pid", INT}, {"tid", INT}, {"lost", INT}, {"why", TEXT}),
	/* From cat/analysis/analysis.h, once the whole trace has been read; a group finding (stuck,
	 * leak) lists its coroutines in finding_members. */
	[CTP_EXPORT_FINDINGS] =
		TABLE("findings", TRACE_ID, {"finding", INT}, {"kind", KEY}, {"pid", INT},
		      {"coro", INT}, {"fd", INT}, {"op", TEXT}, {"stack", INT}, {"ts", INT},
		      {"duration_ns", INT}, {"at_end", INT}, {"close_ts", INT}, {"close_coro", INT},
		      {"close_tid", INT}, {"close_stack", INT}, {"signo", INT}, {"tid", INT},
		      {"addr", TEXT}, {"members", INT}, {"uncertain", INT}),
	[CTP_EXPORT_FINDING_MEMBERS] =
		TABLE("finding_members", TRACE_ID, {"finding", INT}, {"coro", INT}, {"fd", INT}),
};

/* The indexes for the obvious questions: one coroutine's history in time order, everything in
 * a time window, one fd's history, a stack's frames; each leads with trace_id, which also makes
 * replacing one trace's rows cheap. */
static const struct {
	const char *name, *table, *columns;
} indexes[] = {
	{"processes_by_pid", "processes", "trace_id, pid"},
	{"process_args_by_pid", "process_args", "trace_id, pid, idx"},
	{"process_exits_by_pid", "process_exits", "trace_id, pid"},
	{"coroutines_by_coro", "coroutines", "trace_id, pid, coro"},
	{"switches_by_from", "switches", "trace_id, pid, from_coro, ts"},
	{"switches_by_to", "switches", "trace_id, pid, to_coro, ts"},
	{"switches_by_time", "switches", "trace_id, ts"},
	{"stacks_by_stack", "stacks", "trace_id, pid, stack"},
	{"frames_by_stack", "frames", "trace_id, pid, stack, idx"},
	{"modules_by_pid", "modules", "trace_id, pid"},
	{"fd_events_by_fd", "fd_events", "trace_id, pid, fd, ts"},
	{"fd_events_by_coro", "fd_events", "trace_id, pid, coro, ts"},
	{"fd_events_by_time", "fd_events", "trace_id, ts"},
	{"coro_ends_by_coro", "coro_ends", "trace_id, pid, coro"},
	{"final_states_by_coro", "final_states", "trace_id, pid, coro"},
	{"snapshot_states_by_snapshot", "snapshot_states", "trace_id, snapshot, pid, coro"},
	{"losses_by_pid", "losses", "trace_id, pid"},
	{"findings_by_kind", "findings", "trace_id, kind"},
	{"finding_members_by_finding", "finding_members", "trace_id, finding"},
};

static const char *type_name(enum ctp_export_dialect d, enum ctp_export_type t)
{
	switch (t) {
	case CTP_EXPORT_INT:
		return d == CTP_EXPORT_SQLITE ? "INTEGER" : "BIGINT";
	case CTP_EXPORT_TEXT:
		/* MySQL's TEXT stops at 64 KiB; a C++ symbol or an argv can be longer. */
		return d == CTP_EXPORT_MYSQL ? "MEDIUMTEXT" : "TEXT";
	case CTP_EXPORT_KEY:
		return d == CTP_EXPORT_MYSQL ? "VARCHAR(64)" : "TEXT";
	}
	return "TEXT";
}

/* Text is compared byte for byte in MySQL too (utf8mb4_bin), like in the other two. */
static const char mysql_table_options[] =
	" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

static char *finish_list(FILE *f, char **buf)
{
	fputc('\0', f);
	if (fclose(f) != 0) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

char *ctp_export_ddl_tables(enum ctp_export_dialect d)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++) {
		const struct ctp_export_table_def *def = &ctp_export_tables[t];
		fprintf(f, "CREATE TABLE IF NOT EXISTS %s (\n", def->name);
		for (unsigned c = 0; c < def->ncols; c++) {
			const struct ctp_export_column *col = &def->cols[c];
			fprintf(f, "  %s %s", col->name, type_name(d, col->type));
			if (t == CTP_EXPORT_TRACES && c == 0)
				fputs(" PRIMARY KEY", f);
			else if (t == CTP_EXPORT_TRACES && col->type == CTP_EXPORT_KEY)
				fputs(" NOT NULL UNIQUE", f);
			else if (c == 0)
				fputs(" NOT NULL", f);
			fputs(c + 1 < def->ncols ? ",\n" : "\n", f);
		}
		fprintf(f, ")%s", d == CTP_EXPORT_MYSQL ? mysql_table_options : "");
		fputc('\0', f);
	}
	return finish_list(f, &buf);
}

char *ctp_export_ddl_indexes(enum ctp_export_dialect d)
{
	(void)d; /* the same statement in all three */
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof(indexes) / sizeof(indexes[0]); i++) {
		fprintf(f, "CREATE INDEX IF NOT EXISTS %s ON %s (%s)", indexes[i].name,
			indexes[i].table, indexes[i].columns);
		fputc('\0', f);
	}
	return finish_list(f, &buf);
}

/* Where each database lists a table's columns: the names here are the schema's own, safe in a
 * literal. */
static const char *columns_of_table(enum ctp_export_dialect d)
{
	switch (d) {
	case CTP_EXPORT_SQLITE:
		return "SELECT COUNT(*) FROM pragma_table_info('%s') WHERE name IN (";
	case CTP_EXPORT_POSTGRES:
		return "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
		       "current_schema() AND table_name = '%s' AND column_name IN (";
	case CTP_EXPORT_MYSQL:
		return "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
		       "DATABASE() AND table_name = '%s' AND column_name IN (";
	}
	return NULL;
}

/* Appends to the statement in buf (*len bytes so far); false once it no longer fits. */
__attribute__((format(printf, 4, 5))) static bool append(char *buf, size_t size, size_t *len,
							 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = *len < size ? vsnprintf(buf + *len, size - *len, fmt, ap) : -1;
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *len)
		return false;
	*len += (size_t)n;
	return true;
}

bool ctp_export_sql_has_columns(enum ctp_export_dialect d, enum ctp_export_table t, int c,
				char *buf, size_t size)
{
	const struct ctp_export_table_def *def = &ctp_export_tables[t];
	unsigned first = c < 0 ? 0 : (unsigned)c, end = c < 0 ? def->ncols : (unsigned)c + 1;
	size_t len = 0;
	bool fits = append(buf, size, &len, columns_of_table(d), def->name);
	for (unsigned i = first; i < end; i++)
		fits = fits &&
		       append(buf, size, &len, "%s'%s'", i > first ? ", " : "", def->cols[i].name);
	return fits && append(buf, size, &len, ")");
}

bool ctp_export_sql_add_column(enum ctp_export_dialect d, enum ctp_export_table t, unsigned c,
			       char *buf, size_t size)
{
	const struct ctp_export_table_def *def = &ctp_export_tables[t];
	int n = snprintf(buf, size, "ALTER TABLE %s ADD COLUMN %s %s", def->name, def->cols[c].name,
			 type_name(d, def->cols[c].type));
	return n >= 0 && (size_t)n < size;
}

/* One export as ctp-cat runs it: the schema is made if missing, then one transaction holds the
 * whole trace, so a failed or interrupted export leaves nothing behind. A trace is known by its
 * identity (a hash of its header line, which holds the collector's start time to the
 * nanosecond): exporting the same trace again is refused, or replaces the earlier rows under
 * the same trace_id with --replace. Never a silent duplicate. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cat/analysis/analysis.h"
#include "cat/analysis/snapshot_watch.h"
#include "cat/cat.h"
#include "cat/export/export.h"

struct export_session {
	struct ctp_export_db db;
	const char
		*label; /* how messages name the database: never a URI (it may hold a password) */
	const char *input;
	bool replace, started;
	int64_t trace_id;
	char identity[17];
	char *tool; /* the header's */
	int version;
	uint64_t start;
	uint64_t lines;
	const char *end_state;
	/* Which `state` lines are a live snapshot's; how many snapshots came so far, and the
	 * number of each process's latest (pid, 0): its states follow it, maybe after lines of
	 * other processes. */
	struct ctp_snapshot_watch snapshots;
	uint32_t nsnapshots;
	struct ctp_idmap snapshot_of;
	/* The findings: the run's analysis, fed and finished by the stage in front. */
	const struct ctp_analysis *analysis;
	uint64_t rows, rows_by_table[CTP_EXPORT_NTABLES];
	struct timespec t0;
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Says what went wrong and makes the read loop stop without a message of its own. */
static int fail(struct export_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ctp-cat: %s: ", s->label);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errno = ECANCELED;
	return -1;
}

static int db_failed(struct export_session *s)
{
	return fail(s, "%s", s->db.err);
}

/* Runs each statement of a NUL-separated list (export_schema.c). */
static int exec_list(struct export_session *s, char *list)
{
	if (!list)
		return fail(s, "out of memory");
	int rc = 0;
	for (const char *sql = list; *sql && rc == 0; sql += strlen(sql) + 1)
		if (s->db.exec(&s->db, sql) < 0)
			rc = db_failed(s);
	free(list);
	return rc;
}

/* FNV-1a, 64 bits: the header line is short, and the identity need not resist forgery, only
 * tell traces apart. */
static void make_identity(struct export_session *s, const char *text, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
	snprintf(s->identity, sizeof(s->identity), "%016" PRIx64, h);
}

static int query(struct export_session *s, const char *sql, int64_t *value, bool *found)
{
	return s->db.query_int(&s->db, sql, value, found) < 0 ? db_failed(s) : 0;
}

/* Tables made by an earlier version lack the columns added to them since (always at the end):
 * each is added, NULL in the rows exported before. One query per table when nothing is
 * missing. */
static int add_missing_columns(struct export_session *s)
{
	char sql[512];
	int64_t have;
	bool found;
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++) {
		const struct ctp_export_table_def *def = &ctp_export_tables[t];
		if (!ctp_export_sql_has_columns(s->db.dialect, t, -1, sql, sizeof(sql)))
			return fail(s, "the statement for table %s is too long", def->name);
		if (query(s, sql, &have, &found) < 0)
			return -1;
		for (unsigned c = 0; have < def->ncols && c < def->ncols; c++) {
			ctp_export_sql_has_columns(s->db.dialect, t, (int)c, sql, sizeof(sql));
			if (query(s, sql, &have, &found) < 0)
				return -1;
			if (have)
				continue;
			ctp_export_sql_add_column(s->db.dialect, t, c, sql, sizeof(sql));
			if (s->db.exec(&s->db, sql) < 0)
				return db_failed(s);
			fprintf(stderr,
				"ctp-cat: %s: added column %s.%s (the table was made by an "
				"earlier version)\n",
				s->label, def->name, def->cols[c].name);
		}
	}
	return 0;
}

/* The header: makes the schema, opens the transaction, decides the trace_id. */
static int begin(struct export_session *s, const struct ctp_event *header)
{
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	if (header->line)
		make_identity(s, header->line->text, header->line->len);
	s->version = header->trace.version;
	s->start = header->trace.start;
	if (header->trace.tool && !(s->tool = strdup(header->trace.tool)))
		return fail(s, "out of memory");
	/* In SQLite and PostgreSQL the schema is made inside the transaction (one sync instead of
	 * one per table); in MySQL DDL would commit the transaction, so it comes first. */
	bool ddl_commits = s->db.dialect == CTP_EXPORT_MYSQL;
	if (ddl_commits &&
	    (exec_list(s, ctp_export_ddl_tables(s->db.dialect)) < 0 || add_missing_columns(s) < 0))
		return -1;
	if (s->db.exec(&s->db, "BEGIN") < 0)
		return db_failed(s);
	s->started = true;
	if (!ddl_commits &&
	    (exec_list(s, ctp_export_ddl_tables(s->db.dialect)) < 0 || add_missing_columns(s) < 0))
		return -1;

	char sql[256];
	int64_t old;
	bool found;
	/* The identity is hex digits: safe in a literal. */
	snprintf(sql, sizeof(sql), "SELECT trace_id FROM traces WHERE identity = '%s'",
		 s->identity);
	if (query(s, sql, &old, &found) < 0)
		return -1;
	if (found && !s->replace)
		return fail(s,
			    "%s: this trace was exported before, as trace_id %" PRId64
			    " (identity %s); --replace replaces it",
			    s->input, old, s->identity);
	if (found) {
		for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++) {
			snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE trace_id = %" PRId64,
				 ctp_export_tables[t].name, old);
			if (s->db.exec(&s->db, sql) < 0)
				return db_failed(s);
		}
		s->trace_id = old;
	} else {
		if (query(s, "SELECT COALESCE(MAX(trace_id), 0) + 1 FROM traces", &s->trace_id,
			  &found) < 0)
			return -1;
	}
	if (s->db.prepare && s->db.prepare(&s->db) < 0)
		return db_failed(s);
	return 0;
}

static int emit_row(void *ctx, enum ctp_export_table table, const struct ctp_export_value *values)
{
	struct export_session *s = ctx;
	if (s->db.row(&s->db, table, values) < 0)
		return db_failed(s);
	s->rows++;
	s->rows_by_table[table]++;
	return 0;
}

static int export_event(void *state, const struct ctp_event *ev)
{
	struct export_session *s = state;
	if (!s->started && begin(s, ev) < 0)
		return -1;
	if (ev->line)
		s->lines++;
	if (ctp_snapshot_watch_event(&s->snapshots, ev) < 0)
		return fail(s, "out of memory");
	int64_t snapshot = -1;
	if (ev->type == CTP_EV_SNAPSHOT && ev->line) {
		snapshot = s->nsnapshots++;
		if (ctp_idmap_put(&s->snapshot_of, ev->pid, 0, (uint32_t)snapshot) < 0)
			return fail(s, "out of memory");
	} else if (s->snapshots.state_in_snapshot) {
		uint32_t of = ctp_idmap_get(&s->snapshot_of, ev->pid, 0);
		snapshot = of == CTP_IDMAP_NONE ? -1 : (int64_t)of;
	}
	return ctp_export_event_rows(ev, s->trace_id, snapshot, emit_row, s);
}

static void export_ended(void *state, const struct ctp_trace_end *end)
{
	struct export_session *s = state;
	switch (end->kind) {
	case CTP_TRACE_COMPLETE:
		s->end_state = ctp_trace_end_missing(end) || ctp_trace_end_uncounted(end)
				       ? "lines_missing"
			       : end->bad_lines ? "bad_lines"
						: "complete";
		break;
	case CTP_TRACE_TRAILING:
		s->end_state = "trailing";
		break;
	case CTP_TRACE_TRUNCATED:
		s->end_state = "truncated";
		break;
	case CTP_TRACE_CORRUPT:
		s->end_state = "corrupt";
		break;
	case CTP_TRACE_NOT_TRACE:
	case CTP_TRACE_IO_ERROR:
		s->end_state = "read_error";
		break;
	}
}

/* The traces row goes last, when its line count and end are known. */
static int emit_trace_row(struct export_session *s)
{
	struct ctp_export_value row[CTP_EXPORT_MAX_COLUMNS] = {
		ctp_export_int(s->trace_id),
		ctp_export_text(s->identity),
		ctp_export_text(strcmp(s->input, "-") == 0 ? NULL : s->input),
		ctp_export_text(s->tool),
		s->version ? ctp_export_int(s->version) : (struct ctp_export_value){0},
		ctp_export_id(s->start),
		ctp_export_int((int64_t)time(NULL)),
		ctp_export_int((int64_t)s->lines),
		ctp_export_text(s->end_state ? s->end_state : "complete"),
	};
	return emit_row(s, CTP_EXPORT_TRACES, row);
}

static int export_finish(void *state)
{
	struct export_session *s = state;
	if (!s->started)
		return 0; /* not a trace: the read loop says so */
	if (ctp_export_findings_rows(s->analysis, s->trace_id, emit_row, s) < 0 ||
	    emit_trace_row(s) < 0)
		return -1;
	if (s->db.flush(&s->db) < 0)
		return db_failed(s);
	double load = seconds_since(&s->t0);
	/* Indexes after the data: building one from sorted rows is much faster than updating it
	 * row by row. They are made once per database; later exports keep them current. MySQL
	 * commits at DDL, so there they follow the commit. */
	bool ddl_commits = s->db.dialect == CTP_EXPORT_MYSQL;
	if (!ddl_commits && exec_list(s, ctp_export_ddl_indexes(s->db.dialect)) < 0)
		return -1;
	if (s->db.exec(&s->db, "COMMIT") < 0)
		return db_failed(s);
	s->started = false;
	if (ddl_commits && exec_list(s, ctp_export_ddl_indexes(s->db.dialect)) < 0)
		return -1;
	double all = seconds_since(&s->t0);
	fprintf(stderr,
		"ctp-cat: %s: exported as trace_id %" PRId64 ": %" PRIu64 " rows (%" PRIu64
		" switches) in %.2f s (%.2f s with indexes), %.0f rows/s\n",
		s->label, s->trace_id, s->rows, s->rows_by_table[CTP_EXPORT_SWITCHES], load, all,
		load > 0 ? (double)s->rows / load : 0.0);
	return 0;
}

static void export_free(void *state)
{
	struct export_session *s = state;
	/* Closing with the transaction still open rolls it back. */
	if (s->db.close)
		s->db.close(&s->db);
	free(s->tool);
	ctp_snapshot_watch_free(&s->snapshots);
	ctp_idmap_free(&s->snapshot_of);
	free(s);
}

static const struct {
	const char *name;
	enum ctp_export_dialect dialect;
	int (*open)(struct ctp_export_db *db, const char *target);
} backends[] = {
	[CTP_EXPORT_SQLITE] = {"sqlite", CTP_EXPORT_SQLITE, ctp_export_sqlite_open},
	[CTP_EXPORT_POSTGRES] = {"postgres", CTP_EXPORT_POSTGRES, ctp_export_postgres_open},
	[CTP_EXPORT_MYSQL] = {"mysql", CTP_EXPORT_MYSQL, ctp_export_mysql_open},
};

int ctp_cat_out_export_open(struct ctp_cat_output *out, const struct ctp_cat_options *opt,
			    const struct ctp_analysis *a)
{
	enum ctp_export_dialect d = opt->format == CTP_CAT_FORMAT_SQLITE     ? CTP_EXPORT_SQLITE
				    : opt->format == CTP_CAT_FORMAT_POSTGRES ? CTP_EXPORT_POSTGRES
									     : CTP_EXPORT_MYSQL;
	struct export_session *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->label = d == CTP_EXPORT_SQLITE ? opt->export_target : backends[d].name;
	s->input = opt->input;
	s->replace = opt->export_replace;
	s->analysis = a;
	s->db.dialect = d;
	if (backends[d].open(&s->db, opt->export_target) < 0) {
		fail(s, "cannot open: %s", s->db.err);
		export_free(s);
		errno = ECANCELED;
		return -1;
	}
	out->state = s;
	out->event = export_event;
	out->finish = export_finish;
	out->free = export_free;
	out->ended = export_ended;
	return 0;
}

static void print_list(FILE *f, char *list)
{
	for (const char *sql = list; sql && *sql; sql += strlen(sql) + 1)
		fprintf(f, "%s;\n\n", sql);
	free(list);
}

int ctp_cat_print_schema(const char *database, FILE *f)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (strcmp(database, backends[i].name) != 0)
			continue;
		print_list(f, ctp_export_ddl_tables(backends[i].dialect));
		print_list(f, ctp_export_ddl_indexes(backends[i].dialect));
		return fflush(f) == 0 ? CTP_CAT_EXIT_OK : CTP_CAT_EXIT_FAILURE;
	}
	fprintf(stderr, "ctp-cat: --print-schema: '%s' is not sqlite, postgres or mysql\n",
		database);
	return CTP_CAT_EXIT_FAILURE;
}

/* Exporting a trace into a database (docs/schema.md). The trace's lines become rows of one
 * schema, the same for every database: export_schema.c defines the tables, export_rows.c turns
 * lines into rows, export_session.c runs one export (schema, duplicate check, transaction), and
 * each out_<database>.c only sends rows and statements. */
#ifndef CTP_CAT_EXPORT_H
#define CTP_CAT_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/model/event.h"
#include "cat/reader/trace_reader.h"

enum ctp_export_dialect {
	CTP_EXPORT_SQLITE,
	CTP_EXPORT_POSTGRES,
	CTP_EXPORT_MYSQL,
};

/* Column types: a 64-bit integer, text of any length, and short text that a unique index
 * covers (MySQL cannot index unbounded text). */
enum ctp_export_type {
	CTP_EXPORT_INT,
	CTP_EXPORT_TEXT,
	CTP_EXPORT_KEY,
};

enum ctp_export_table {
	CTP_EXPORT_TRACES,
	CTP_EXPORT_PROCESSES,
	CTP_EXPORT_PROCESS_ARGS,
	CTP_EXPORT_PROCESS_EXITS,
	CTP_EXPORT_COROUTINES,
	CTP_EXPORT_SWITCHES,
	CTP_EXPORT_STACKS,
	CTP_EXPORT_FRAMES,
	CTP_EXPORT_MODULES,
	CTP_EXPORT_FD_EVENTS,
	CTP_EXPORT_CORO_ENDS,
	CTP_EXPORT_FINAL_STATES,
	CTP_EXPORT_SNAPSHOTS,
	CTP_EXPORT_SNAPSHOT_STATES,
	CTP_EXPORT_LOSSES,
	CTP_EXPORT_FINDINGS,
	CTP_EXPORT_FINDING_MEMBERS,
	CTP_EXPORT_NTABLES,
};

#define CTP_EXPORT_MAX_COLUMNS 24

struct ctp_export_column {
	const char *name;
	enum ctp_export_type type;
};

struct ctp_export_table_def {
	const char *name;
	unsigned ncols; /* the first column is always trace_id */
	const struct ctp_export_column *cols;
};

extern const struct ctp_export_table_def ctp_export_tables[CTP_EXPORT_NTABLES];

/* The schema's DDL for one database: CREATE TABLE statements (and the unique index on trace
 * identities), then the query indexes. Each is a NUL-separated list of statements ending with an
 * empty one; free() the result. NULL when out of memory. */
char *ctp_export_ddl_tables(enum ctp_export_dialect d);
char *ctp_export_ddl_indexes(enum ctp_export_dialect d);
/* For a database made by an earlier version, whose tables lack the columns added since: the
 * query that counts how many of table t's columns it has, or, with column c (else -1), whether
 * it has that one; and the statement that adds column c. Each into buf; false if it is too
 * small. */
bool ctp_export_sql_has_columns(enum ctp_export_dialect d, enum ctp_export_table t, int c,
				char *buf, size_t size);
bool ctp_export_sql_add_column(enum ctp_export_dialect d, enum ctp_export_table t, unsigned c,
			       char *buf, size_t size);

/* One value of a row. Text points into the event (valid until the row has been sent), is valid
 * UTF-8 (the reader checks), and holds no NUL byte. */
enum ctp_export_kind { CTP_EXPORT_NULL, CTP_EXPORT_INTEGER, CTP_EXPORT_STRING };
struct ctp_export_value {
	enum ctp_export_kind kind;
	int64_t i;
	const char *s;
	size_t len;
};

/* A database connection as the session uses it. Functions return 0, or -1 with a message in
 * `err`. */
struct ctp_export_db {
	enum ctp_export_dialect dialect;
	void *state;
	char err[512];
	/* One statement with no result (DDL, BEGIN, DELETE, COMMIT). */
	int (*exec)(struct ctp_export_db *db, const char *sql);
	/* A query whose result is one integer (or none: *found false). */
	int (*query_int)(struct ctp_export_db *db, const char *sql, int64_t *value, bool *found);
	/* Called once the tables exist, before the first row. May be NULL. */
	int (*prepare)(struct ctp_export_db *db);
	/* One row of `table`, all its columns in order. The backend may hold it until flush. */
	int (*row)(struct ctp_export_db *db, enum ctp_export_table table,
		   const struct ctp_export_value *values);
	/* Sends every row it still holds. */
	int (*flush)(struct ctp_export_db *db);
	void (*close)(struct ctp_export_db *db);
};

/* The backends' constructors: `target` is a file name (SQLite) or a connection URI. They fill
 * `db` and return 0, or -1 with the reason in db->err. */
int ctp_export_sqlite_open(struct ctp_export_db *db, const char *target);
int ctp_export_postgres_open(struct ctp_export_db *db, const char *target);
int ctp_export_mysql_open(struct ctp_export_db *db, const char *target);

/* Row extraction: turns one event into rows, handing each to `emit`. Unknown line types and
 * derived events give no row. `snapshot` is the number (from 0, in the trace's order) of the
 * live snapshot a `snapshot` event opens or a `state` event belongs to, -1 for a final state.
 * Returns what emit returned first when not 0. */
typedef int (*ctp_export_emit_fn)(void *ctx, enum ctp_export_table table,
				  const struct ctp_export_value *values);
int ctp_export_event_rows(const struct ctp_event *ev, int64_t trace_id, int64_t snapshot,
			  ctp_export_emit_fn emit, void *ctx);

/* The findings of a finished analysis (cat/analysis/analysis.h) as rows of findings and
 * finding_members. */
struct ctp_analysis;
int ctp_export_findings_rows(const struct ctp_analysis *a, int64_t trace_id,
			     ctp_export_emit_fn emit, void *ctx);

/* Column values: NULL for a null text, an id or time of 0 (unknown in a trace). */
struct ctp_export_value ctp_export_text(const char *s);
struct ctp_export_value ctp_export_int(int64_t i);
struct ctp_export_value ctp_export_id(uint64_t id);

#endif

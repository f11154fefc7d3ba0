/* Export into SQLite: one prepared INSERT per table, values bound (never quoted into SQL), the
 * whole trace in one transaction. The inserts run on a thread of their own (export_pipe.h)
 * while the main thread reads and parses the trace. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "cat/export/export.h"
#include "cat/export/export_batch.h"
#include "cat/export/export_pipe.h"

struct out_sqlite {
	sqlite3 *db;
	sqlite3_stmt *insert[CTP_EXPORT_NTABLES];
	struct ctp_export_pipe *pipe; /* from the first row on */
};

/* The connection is used by one thread at a time: the pipe's while rows flow, the caller's
 * once they have drained. */
static int drain(struct ctp_export_db *db)
{
	struct out_sqlite *o = db->state;
	return o->pipe ? ctp_export_pipe_drain(o->pipe) : 0;
}

static int failed(struct ctp_export_db *db, const char *what)
{
	struct out_sqlite *o = db->state;
	snprintf(db->err, sizeof(db->err), "%s: %s", what, sqlite3_errmsg(o->db));
	return -1;
}

static int sqlite_exec(struct ctp_export_db *db, const char *sql)
{
	struct out_sqlite *o = db->state;
	if (drain(db) < 0)
		return -1;
	return sqlite3_exec(o->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : failed(db, sql);
}

static int sqlite_query_int(struct ctp_export_db *db, const char *sql, int64_t *value, bool *found)
{
	struct out_sqlite *o = db->state;
	sqlite3_stmt *st;
	if (drain(db) < 0)
		return -1;
	if (sqlite3_prepare_v2(o->db, sql, -1, &st, NULL) != SQLITE_OK)
		return failed(db, sql);
	int rc = sqlite3_step(st);
	*found = rc == SQLITE_ROW;
	if (*found)
		*value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : failed(db, sql);
}

static int sqlite_prepare(struct ctp_export_db *db)
{
	struct out_sqlite *o = db->state;
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++) {
		if (o->insert[t])
			continue;
		const struct ctp_export_table_def *def = &ctp_export_tables[t];
		struct ctp_export_buf sql = {0};
		int rc = ctp_export_buf_str(&sql, "INSERT INTO ");
		rc = rc ? rc : ctp_export_buf_str(&sql, def->name);
		rc = rc ? rc : ctp_export_buf_str(&sql, " (");
		rc = rc ? rc : ctp_export_buf_columns(&sql, def);
		rc = rc ? rc : ctp_export_buf_str(&sql, ") VALUES (");
		for (unsigned c = 0; c < def->ncols && rc == 0; c++)
			rc = ctp_export_buf_str(&sql, c ? ", ?" : "?");
		rc = rc ? rc : ctp_export_buf_add(&sql, ")", 2); /* with the NUL */
		if (rc) {
			ctp_export_buf_free(&sql);
			snprintf(db->err, sizeof(db->err), "out of memory");
			return -1;
		}
		rc = sqlite3_prepare_v3(o->db, sql.p, -1, SQLITE_PREPARE_PERSISTENT, &o->insert[t],
					NULL);
		if (rc != SQLITE_OK) {
			rc = failed(db, sql.p);
			ctp_export_buf_free(&sql);
			return rc;
		}
		ctp_export_buf_free(&sql);
	}
	return 0;
}

/* On the pipe's thread. */
static int insert_row(void *ctx, enum ctp_export_table table, const struct ctp_export_value *values)
{
	struct ctp_export_db *db = ctx;
	struct out_sqlite *o = db->state;
	sqlite3_stmt *st = o->insert[table];
	unsigned n = ctp_export_tables[table].ncols;
	for (unsigned c = 0; c < n; c++) {
		const struct ctp_export_value *v = &values[c];
		int rc = SQLITE_OK;
		switch (v->kind) {
		case CTP_EXPORT_NULL:
			rc = sqlite3_bind_null(st, (int)c + 1);
			break;
		case CTP_EXPORT_INTEGER:
			rc = sqlite3_bind_int64(st, (int)c + 1, v->i);
			break;
		case CTP_EXPORT_STRING:
			/* The text outlives the step: no copy. */
			rc = sqlite3_bind_text64(st, (int)c + 1, v->s, v->len, SQLITE_STATIC,
						 SQLITE_UTF8);
			break;
		}
		if (rc != SQLITE_OK)
			return failed(db, "bind");
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : failed(db, ctp_export_tables[table].name);
}

static int sqlite_row(struct ctp_export_db *db, enum ctp_export_table table,
		      const struct ctp_export_value *values)
{
	struct out_sqlite *o = db->state;
	if (!o->pipe) {
		o->pipe = ctp_export_pipe_start(insert_row, db);
		if (!o->pipe) {
			snprintf(db->err, sizeof(db->err), "cannot start the insert thread");
			return -1;
		}
	}
	if (ctp_export_pipe_row(o->pipe, table, values) == 0)
		return 0;
	if (errno == ENOMEM)
		snprintf(db->err, sizeof(db->err), "out of memory");
	return -1; /* else insert_row said why */
}

static int sqlite_flush(struct ctp_export_db *db)
{
	return drain(db);
}

static void sqlite_close(struct ctp_export_db *db)
{
	struct out_sqlite *o = db->state;
	if (!o)
		return;
	ctp_export_pipe_stop(o->pipe);
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++)
		sqlite3_finalize(o->insert[t]);
	sqlite3_close(o->db); /* an open transaction is rolled back */
	free(o);
	db->state = NULL;
}

int ctp_export_sqlite_open(struct ctp_export_db *db, const char *target)
{
	struct out_sqlite *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	db->state = o;
	db->exec = sqlite_exec;
	db->query_int = sqlite_query_int;
	db->prepare = sqlite_prepare;
	db->row = sqlite_row;
	db->flush = sqlite_flush;
	db->close = sqlite_close;
	/* One thread uses the connection: no mutex on every call. */
	if (sqlite3_open_v2(target, &o->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return failed(db, target);
	/* Another writer (a second export) waits its turn instead of failing at once. A larger
	 * page cache keeps the index builds at the end in memory for traces of millions of
	 * rows. */
	sqlite3_busy_timeout(o->db, 10000);
	return sqlite_exec(db, "PRAGMA cache_size = -65536");
}

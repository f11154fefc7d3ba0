/* Export into PostgreSQL through libpq: rows go in COPY ... FROM STDIN batches (text format),
 * one COPY per table's batch, all inside the export's transaction. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/export/export.h"
#include "cat/export/export_batch.h"

/* A COPY per megabyte: few round trips, little memory. */
#define BATCH_BYTES (1u << 20)

struct out_postgres {
	PGconn *conn;
	struct ctp_export_batches batches;
	struct ctp_export_db *db;
};

static int failed(struct ctp_export_db *db, const char *what, const PGresult *res)
{
	struct out_postgres *o = db->state;
	const char *msg = res ? PQresultErrorMessage(res) : "";
	if (!*msg)
		msg = PQerrorMessage(o->conn);
	snprintf(db->err, sizeof(db->err), "%s: %.*s", what, (int)strcspn(msg, "\n"), msg);
	return -1;
}

static int pg_exec(struct ctp_export_db *db, const char *sql)
{
	struct out_postgres *o = db->state;
	PGresult *res = PQexec(o->conn, sql);
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : failed(db, sql, res);
	PQclear(res);
	return rc;
}

static int pg_query_int(struct ctp_export_db *db, const char *sql, int64_t *value, bool *found)
{
	struct out_postgres *o = db->state;
	PGresult *res = PQexec(o->conn, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		failed(db, sql, res);
		PQclear(res);
		return -1;
	}
	*found = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0);
	if (*found)
		*value = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

/* COPY's text format: a backslash, and the tab, newline and carriage return that would end a
 * value or a row, are escaped; every other byte goes as it is (the connection speaks UTF-8).
 * PostgreSQL text cannot hold U+0000 (a trace may, as \u0000): it becomes U+FFFD. */
static int pg_text(void *ctx, struct ctp_export_buf *b, const char *s, size_t n)
{
	(void)ctx;
	if (ctp_export_buf_reserve(b, 3 * n) < 0)
		return -1;
	char *p = b->p + b->len;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		switch (c) {
		case '\\':
			*p++ = '\\';
			*p++ = '\\';
			break;
		case '\t':
			*p++ = '\\';
			*p++ = 't';
			break;
		case '\n':
			*p++ = '\\';
			*p++ = 'n';
			break;
		case '\r':
			*p++ = '\\';
			*p++ = 'r';
			break;
		case '\0':
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
			break;
		default:
			*p++ = c;
		}
	}
	b->len = (size_t)(p - b->p);
	return 0;
}

static int pg_start(void *ctx, struct ctp_export_buf *b, enum ctp_export_table table)
{
	(void)ctx;
	(void)b;
	(void)table;
	return 0;
}

static int pg_send(void *ctx, enum ctp_export_table table, const struct ctp_export_buf *b)
{
	struct out_postgres *o = ctx;
	struct ctp_export_db *db = o->db;
	const struct ctp_export_table_def *def = &ctp_export_tables[table];
	struct ctp_export_buf sql = {0};
	int rc = ctp_export_buf_str(&sql, "COPY ");
	rc = rc ? rc : ctp_export_buf_str(&sql, def->name);
	rc = rc ? rc : ctp_export_buf_str(&sql, " (");
	rc = rc ? rc : ctp_export_buf_columns(&sql, def);
	rc = rc ? rc : ctp_export_buf_add(&sql, ") FROM STDIN", 13); /* with the NUL */
	if (rc) {
		ctp_export_buf_free(&sql);
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	PGresult *res = PQexec(o->conn, sql.p);
	ctp_export_buf_free(&sql);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		failed(db, def->name, res);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	if (PQputCopyData(o->conn, b->p, (int)b->len) != 1 || PQputCopyEnd(o->conn, NULL) != 1)
		return failed(db, def->name, NULL);
	rc = 0;
	while ((res = PQgetResult(o->conn))) {
		if (rc == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = failed(db, def->name, res);
		PQclear(res);
	}
	return rc;
}

static const struct ctp_export_batch_syntax copy_text = {
	.row_sep = "",
	.row_open = "",
	.value_sep = "\t",
	.row_close = "\n",
	.null_text = "\\N",
	.text = pg_text,
	.start = pg_start,
	.send = pg_send,
	.limit = BATCH_BYTES,
};

static int pg_row(struct ctp_export_db *db, enum ctp_export_table table,
		  const struct ctp_export_value *values)
{
	struct out_postgres *o = db->state;
	if (ctp_export_batches_row(&o->batches, table, values) == 0)
		return 0;
	if (!db->err[0])
		snprintf(db->err, sizeof(db->err), "out of memory");
	return -1;
}

static int pg_flush(struct ctp_export_db *db)
{
	struct out_postgres *o = db->state;
	return ctp_export_batches_flush(&o->batches);
}

static void pg_close(struct ctp_export_db *db)
{
	struct out_postgres *o = db->state;
	if (!o)
		return;
	PQfinish(o->conn); /* an open transaction is rolled back */
	ctp_export_batches_free(&o->batches);
	free(o);
	db->state = NULL;
}

/* "relation already exists, skipping" from CREATE ... IF NOT EXISTS is not news. */
static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

int ctp_export_postgres_open(struct ctp_export_db *db, const char *target)
{
	struct out_postgres *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	o->db = db;
	ctp_export_batches_init(&o->batches, &copy_text, o);
	db->state = o;
	db->exec = pg_exec;
	db->query_int = pg_query_int;
	db->prepare = NULL;
	db->row = pg_row;
	db->flush = pg_flush;
	db->close = pg_close;
	o->conn = PQconnectdb(target);
	if (PQstatus(o->conn) != CONNECTION_OK)
		return failed(db, "connect", NULL);
	PQsetNoticeProcessor(o->conn, quiet_notice, NULL);
	if (PQsetClientEncoding(o->conn, "UTF8") != 0)
		return failed(db, "client encoding UTF8", NULL);
	return 0;
}

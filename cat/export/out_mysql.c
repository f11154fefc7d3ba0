/* Export into MySQL or MariaDB through the MariaDB client library: rows go in multi-row
 * INSERTs of about a megabyte each (well under the servers' default max_allowed_packet), text
 * escaped by the library for the connection's character set, all inside the export's
 * transaction. */
#include <ctype.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/export/export.h"
#include "cat/export/export_batch.h"

#define BATCH_BYTES (1u << 20)

struct out_mysql {
	MYSQL *conn;
	struct ctp_export_batches batches;
	struct ctp_export_db *db;
};

static int failed(struct ctp_export_db *db, const char *what)
{
	struct out_mysql *o = db->state;
	snprintf(db->err, sizeof(db->err), "%.200s: %s", what, mysql_error(o->conn));
	return -1;
}

/* Runs a statement and returns its result (NULL for a statement without one). */
static int run(struct ctp_export_db *db, const char *sql, size_t len, MYSQL_RES **res)
{
	struct out_mysql *o = db->state;
	*res = NULL;
	if (mysql_real_query(o->conn, sql, len) != 0)
		return failed(db, sql);
	*res = mysql_store_result(o->conn);
	if (!*res && mysql_field_count(o->conn) != 0)
		return failed(db, sql);
	return 0;
}

static int my_exec(struct ctp_export_db *db, const char *sql)
{
	MYSQL_RES *res;
	int rc = run(db, sql, strlen(sql), &res);
	mysql_free_result(res);
	return rc;
}

static int my_query_int(struct ctp_export_db *db, const char *sql, int64_t *value, bool *found)
{
	MYSQL_RES *res;
	if (run(db, sql, strlen(sql), &res) < 0)
		return -1;
	MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
	*found = row && row[0];
	if (*found)
		*value = strtoll(row[0], NULL, 10);
	mysql_free_result(res);
	return 0;
}

static int my_text(void *ctx, struct ctp_export_buf *b, const char *s, size_t n)
{
	struct out_mysql *o = ctx;
	if (ctp_export_buf_reserve(b, 2 * n + 3) < 0)
		return -1;
	b->p[b->len++] = '\'';
	b->len += mysql_real_escape_string(o->conn, b->p + b->len, s, (unsigned long)n);
	b->p[b->len++] = '\'';
	return 0;
}

static int my_start(void *ctx, struct ctp_export_buf *b, enum ctp_export_table table)
{
	(void)ctx;
	const struct ctp_export_table_def *def = &ctp_export_tables[table];
	int rc = ctp_export_buf_str(b, "INSERT INTO ");
	rc = rc ? rc : ctp_export_buf_str(b, def->name);
	rc = rc ? rc : ctp_export_buf_str(b, " (");
	rc = rc ? rc : ctp_export_buf_columns(b, def);
	return rc ? rc : ctp_export_buf_str(b, ") VALUES ");
}

static int my_send(void *ctx, enum ctp_export_table table, const struct ctp_export_buf *b)
{
	struct out_mysql *o = ctx;
	MYSQL_RES *res;
	if (mysql_real_query(o->conn, b->p, b->len) != 0)
		return failed(o->db, ctp_export_tables[table].name);
	res = mysql_store_result(o->conn);
	mysql_free_result(res);
	return 0;
}

static const struct ctp_export_batch_syntax insert_values = {
	.row_sep = ",",
	.row_open = "(",
	.value_sep = ",",
	.row_close = ")",
	.null_text = "NULL",
	.text = my_text,
	.start = my_start,
	.send = my_send,
	.limit = BATCH_BYTES,
};

static int my_row(struct ctp_export_db *db, enum ctp_export_table table,
		  const struct ctp_export_value *values)
{
	struct out_mysql *o = db->state;
	if (ctp_export_batches_row(&o->batches, table, values) == 0)
		return 0;
	if (!db->err[0])
		snprintf(db->err, sizeof(db->err), "out of memory");
	return -1;
}

static int my_flush(struct ctp_export_db *db)
{
	struct out_mysql *o = db->state;
	return ctp_export_batches_flush(&o->batches);
}

static void my_close(struct ctp_export_db *db)
{
	struct out_mysql *o = db->state;
	if (!o)
		return;
	mysql_close(o->conn); /* an open transaction is rolled back */
	ctp_export_batches_free(&o->batches);
	free(o);
	db->state = NULL;
}

/* The parts of mysql://[USER[:PASSWORD]@][HOST[:PORT]]/DB[?socket=PATH], percent-decoded. */
struct mysql_uri {
	char *user, *password, *host, *db, *socket;
	unsigned port;
};

/* A copy of s[0..n) with %XX decoded; NULL for an empty part. */
static char *decode(const char *s, size_t n)
{
	if (n == 0)
		return NULL;
	char *out = malloc(n + 1), *p = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = {s[i + 1], s[i + 2], 0};
			*p++ = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			*p++ = s[i];
		}
	}
	*p = 0;
	return out;
}

static void uri_free(struct mysql_uri *u)
{
	free(u->user);
	free(u->password);
	free(u->host);
	free(u->db);
	free(u->socket);
}

static int uri_parse(const char *uri, struct mysql_uri *u, char *err, size_t errsize)
{
	*u = (struct mysql_uri){0};
	const char *p;
	if (strncmp(uri, "mysql://", 8) == 0)
		p = uri + 8;
	else if (strncmp(uri, "mariadb://", 10) == 0)
		p = uri + 10;
	else {
		snprintf(err, errsize, "the URI must start with mysql:// or mariadb://");
		return -1;
	}
	const char *slash = strchr(p, '/');
	if (!slash) {
		snprintf(err, errsize, "the URI names no database (mysql://.../DB)");
		return -1;
	}
	const char *at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		u->user = decode(p, (size_t)((colon ? colon : at) - p));
		if (colon)
			u->password = decode(colon + 1, (size_t)(at - colon - 1));
		p = at + 1;
	}
	const char *colon = memchr(p, ':', (size_t)(slash - p));
	u->host = decode(p, (size_t)((colon ? colon : slash) - p));
	if (colon)
		u->port = (unsigned)strtoul(colon + 1, NULL, 10);
	const char *query = strchr(slash, '?');
	u->db = decode(slash + 1, query ? (size_t)(query - slash - 1) : strlen(slash + 1));
	if (query) {
		if (strncmp(query + 1, "socket=", 7) != 0) {
			snprintf(err, errsize, "the only URI parameter known is socket=PATH");
			return -1;
		}
		u->socket = decode(query + 8, strlen(query + 8));
	}
	if (!u->db) {
		snprintf(err, errsize, "the URI names no database (mysql://.../DB)");
		return -1;
	}
	return 0;
}

int ctp_export_mysql_open(struct ctp_export_db *db, const char *target)
{
	struct out_mysql *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	o->db = db;
	ctp_export_batches_init(&o->batches, &insert_values, o);
	db->state = o;
	db->exec = my_exec;
	db->query_int = my_query_int;
	db->prepare = NULL;
	db->row = my_row;
	db->flush = my_flush;
	db->close = my_close;
	o->conn = mysql_init(NULL);
	if (!o->conn) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -1;
	}
	struct mysql_uri u;
	if (uri_parse(target, &u, db->err, sizeof(db->err)) < 0) {
		uri_free(&u);
		return -1;
	}
	/* Four-byte UTF-8: symbols and paths may hold any character. */
	mysql_options(o->conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	MYSQL *ok =
		mysql_real_connect(o->conn, u.host, u.user, u.password, u.db, u.port, u.socket, 0);
	uri_free(&u);
	if (!ok)
		return failed(db, "connect");
	/* Strict: a value that does not fit is an error, never silently cut. */
	return my_exec(db, "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'");
}

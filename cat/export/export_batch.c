#include "cat/export/export_batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ctp_export_buf_reserve(struct ctp_export_buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int ctp_export_buf_add(struct ctp_export_buf *b, const char *s, size_t n)
{
	if (ctp_export_buf_reserve(b, n) < 0)
		return -1;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

int ctp_export_buf_str(struct ctp_export_buf *b, const char *s)
{
	return ctp_export_buf_add(b, s, strlen(s));
}

int ctp_export_buf_columns(struct ctp_export_buf *b, const struct ctp_export_table_def *def)
{
	for (unsigned c = 0; c < def->ncols; c++)
		if ((c && ctp_export_buf_str(b, ", ") < 0) ||
		    ctp_export_buf_str(b, def->cols[c].name) < 0)
			return -1;
	return 0;
}

void ctp_export_buf_free(struct ctp_export_buf *b)
{
	free(b->p);
	*b = (struct ctp_export_buf){0};
}

/* Decimal without printf: this runs for every value of every row. */
static int add_int(struct ctp_export_buf *b, int64_t v)
{
	char tmp[24];
	char *end = tmp + sizeof(tmp), *p = end;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return ctp_export_buf_add(b, p, (size_t)(end - p));
}

void ctp_export_batches_init(struct ctp_export_batches *bs, const struct ctp_export_batch_syntax *s,
			     void *ctx)
{
	*bs = (struct ctp_export_batches){.syntax = s, .ctx = ctx};
}

static int send_batch(struct ctp_export_batches *bs, enum ctp_export_table t)
{
	if (!bs->rows[t])
		return 0;
	int rc = bs->syntax->send(bs->ctx, t, &bs->buf[t]);
	bs->buf[t].len = 0;
	bs->rows[t] = 0;
	return rc;
}

int ctp_export_batches_row(struct ctp_export_batches *bs, enum ctp_export_table table,
			   const struct ctp_export_value *values)
{
	const struct ctp_export_batch_syntax *s = bs->syntax;
	const struct ctp_export_table_def *def = &ctp_export_tables[table];
	struct ctp_export_buf *b = &bs->buf[table];
	int rc = 0;
	if (bs->rows[table] == 0)
		rc = s->start(bs->ctx, b, table);
	else
		rc = ctp_export_buf_str(b, s->row_sep);
	rc = rc ? rc : ctp_export_buf_str(b, s->row_open);
	for (unsigned c = 0; c < def->ncols && rc == 0; c++) {
		if (c)
			rc = ctp_export_buf_str(b, s->value_sep);
		if (rc)
			break;
		switch (values[c].kind) {
		case CTP_EXPORT_NULL:
			rc = ctp_export_buf_str(b, s->null_text);
			break;
		case CTP_EXPORT_INTEGER:
			rc = add_int(b, values[c].i);
			break;
		case CTP_EXPORT_STRING:
			rc = s->text(bs->ctx, b, values[c].s, values[c].len);
			break;
		}
	}
	rc = rc ? rc : ctp_export_buf_str(b, s->row_close);
	if (rc) {
		errno = ENOMEM;
		return -1;
	}
	bs->rows[table]++;
	return b->len >= s->limit ? send_batch(bs, table) : 0;
}

int ctp_export_batches_flush(struct ctp_export_batches *bs)
{
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++)
		if (send_batch(bs, (enum ctp_export_table)t) < 0)
			return -1;
	return 0;
}

void ctp_export_batches_free(struct ctp_export_batches *bs)
{
	for (unsigned t = 0; t < CTP_EXPORT_NTABLES; t++)
		ctp_export_buf_free(&bs->buf[t]);
}

/* Rows sent as text in batches, for the databases that take many rows per statement:
 * PostgreSQL's COPY text format and MySQL's multi-row INSERT differ only in punctuation and in
 * how text is escaped, so one encoder serves both. Each table has its own buffer, sent when it
 * passes a size limit: memory stays bounded whatever the size of the trace. */
#ifndef CTP_CAT_EXPORT_BATCH_H
#define CTP_CAT_EXPORT_BATCH_H

#include "cat/export/export.h"

struct ctp_export_buf {
	char *p;
	size_t len, cap;
};

/* Makes room for `n` more bytes; -1 when out of memory. */
int ctp_export_buf_reserve(struct ctp_export_buf *b, size_t n);
int ctp_export_buf_add(struct ctp_export_buf *b, const char *s, size_t n);
int ctp_export_buf_str(struct ctp_export_buf *b, const char *s);
/* The table's column names, comma-separated. */
int ctp_export_buf_columns(struct ctp_export_buf *b, const struct ctp_export_table_def *def);
void ctp_export_buf_free(struct ctp_export_buf *b);

struct ctp_export_batch_syntax {
	const char *row_sep;   /* between rows */
	const char *row_open;  /* before a row's first value */
	const char *value_sep; /* between values */
	const char *row_close; /* after a row's last value */
	const char *null_text;
	/* Appends `n` bytes of text as one escaped value. */
	int (*text)(void *ctx, struct ctp_export_buf *b, const char *s, size_t n);
	/* Starts a batch of `table` (MySQL: the INSERT ... VALUES; PostgreSQL: nothing). */
	int (*start)(void *ctx, struct ctp_export_buf *b, enum ctp_export_table table);
	/* Sends a batch; 0, or -1 with the reason in the backend's err. */
	int (*send)(void *ctx, enum ctp_export_table table, const struct ctp_export_buf *b);
	size_t limit; /* bytes per batch */
};

struct ctp_export_batches {
	const struct ctp_export_batch_syntax *syntax;
	void *ctx;
	struct ctp_export_buf buf[CTP_EXPORT_NTABLES];
	unsigned rows[CTP_EXPORT_NTABLES];
};

void ctp_export_batches_init(struct ctp_export_batches *bs, const struct ctp_export_batch_syntax *s,
			     void *ctx);
/* 0, or -1: out of memory (errno ENOMEM, err untouched) or sending failed. */
int ctp_export_batches_row(struct ctp_export_batches *bs, enum ctp_export_table table,
			   const struct ctp_export_value *values);
int ctp_export_batches_flush(struct ctp_export_batches *bs);
void ctp_export_batches_free(struct ctp_export_batches *bs);

#endif

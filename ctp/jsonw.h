/* A small, fast JSON writer for the collector's hot path: one trace line is appended into a
 * growable buffer with no printf and no allocation once the buffer has reached its working size.
 * The caller builds whole lines (objects) by appending literal fragments and values; the writer
 * knows nothing of nesting, which keeps each append a few instructions. */
#ifndef CTP_JSONW_H
#define CTP_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ctp_jsonw {
	char *buf;
	size_t len;
	size_t cap;
	/* The last number >= 10^8 written, divided by 10^8, and its digits (ctp_jsonw_u64). */
	uint64_t high;
	char high_digits[12];
	uint8_t high_len;
};

void ctp_jsonw_init(struct ctp_jsonw *w);
void ctp_jsonw_free(struct ctp_jsonw *w);

/* Makes room for `n` more bytes (grows geometrically; aborts on out-of-memory). */
void ctp_jsonw_grow(struct ctp_jsonw *w, size_t n);

static inline void ctp_jsonw_reserve(struct ctp_jsonw *w, size_t n)
{
	if (w->cap - w->len < n)
		ctp_jsonw_grow(w, n);
}

static inline void ctp_jsonw_reset(struct ctp_jsonw *w)
{
	w->len = 0;
}

/* Appends bytes as they are: for literal JSON fragments such as `,"pid":`. */
static inline void ctp_jsonw_raw(struct ctp_jsonw *w, const char *s, size_t n)
{
	ctp_jsonw_reserve(w, n);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

/* A string literal fragment, its length known at compile time. */
#define CTP_JSONW_LIT(w, lit) ctp_jsonw_raw((w), "" lit, sizeof(lit) - 1)

void ctp_jsonw_u64(struct ctp_jsonw *w, uint64_t v);
void ctp_jsonw_i64(struct ctp_jsonw *w, int64_t v);
/* An address as a JSON string "0x..." in lower-case hex. */
void ctp_jsonw_hex(struct ctp_jsonw *w, uint64_t v);
/* A quoted, escaped string; NULL is written as null. Bytes that are not valid UTF-8 become
 * U+FFFD, so that the line stays valid JSON whatever a traced process sent. */
void ctp_jsonw_str(struct ctp_jsonw *w, const char *s);
void ctp_jsonw_strn(struct ctp_jsonw *w, const char *s, size_t n);

static inline void ctp_jsonw_null(struct ctp_jsonw *w)
{
	CTP_JSONW_LIT(w, "null");
}

#endif

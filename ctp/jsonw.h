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
	/* The last number >= 10^8 written, divided by 10^8, and its digits (ctp_jsonw_put_u64),
	 * copied whole: 16 bytes are one store. */
	uint64_t high;
	char high_digits[16];
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

/* The room ctp_jsonw_put_u64 needs: 20 digits, and the word stores that reach past the last. */
#define CTP_JSONW_NUMBER_ROOM 32

/* The eight decimal digits of v < 10^8, leading zeros included, as one word whose lowest byte is
 * the first digit: split into lanes, four digits in each of two, then two in each of four, then
 * one in each of eight, each split a multiply and a shift for all lanes at once (x * 10486 >> 20
 * is x / 100 for x < 10^4, x * 103 >> 10 is x / 10 for x < 100; no lane's product reaches the
 * next's). No loads: with the table of digit pairs this replaced, eight digits took as many
 * instructions and four loads. */
static inline uint64_t ctp_jsonw_digits8(uint32_t v)
{
	uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t hundreds = (x * 10486 >> 20) & 0x0000007F0000007Full;
	x = (x - 100 * hundreds) << 16 | hundreds;
	uint64_t tens = (x * 103 >> 10) & 0x000F000F000F000Full;
	x = (x - 10 * tens) << 8 | tens;
	return x | 0x3030303030303030ull;
}

/* How many decimal digits v has (1 for 0): the bit length tells it to within one. */
static inline unsigned ctp_jsonw_digit_count(uint32_t v)
{
	static const uint32_t pow10[] = {1,	 10,	  100,	    1000,      10000,
					 100000, 1000000, 10000000, 100000000, 1000000000};
	unsigned bits = 32 - (unsigned)__builtin_clz(v | 1);
	unsigned t = (bits * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */
	return t + ((v | 1) >= pow10[t]);
}

/* The last n (1-8) of the digits in `digits` (ctp_jsonw_digits8) at p, as one 8-byte store. */
static inline char *ctp_jsonw_put_digits(char *p, uint64_t digits, unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	digits >>= 8 * (8 - n);
#else
	digits = __builtin_bswap64(digits) << 8 * (8 - n);
#endif
	memcpy(p, &digits, sizeof(digits));
	return p + n;
}

/* Caches the digits of the part of a number above its last eight (ctp_jsonw_put_u64). */
void ctp_jsonw_cache_high(struct ctp_jsonw *w, uint64_t high);

/* Writes v at p, with CTP_JSONW_NUMBER_ROOM bytes there reserved, and returns the end; for a
 * line built with one reservation. Nearly all numbers of a trace are small ids or nanosecond
 * timestamps, whose digits above the last eight change every tenth of a second: those are copied
 * from the previous number's. */
static inline char *ctp_jsonw_put_u64(struct ctp_jsonw *w, char *p, uint64_t v)
{
	if (v < 100000000)
		return ctp_jsonw_put_digits(p, ctp_jsonw_digits8((uint32_t)v),
					    ctp_jsonw_digit_count((uint32_t)v));
	uint64_t high = v / 100000000;
	if (high != w->high)
		ctp_jsonw_cache_high(w, high);
	memcpy(p, w->high_digits, sizeof(w->high_digits));
	p += w->high_len;
	return ctp_jsonw_put_digits(p, ctp_jsonw_digits8((uint32_t)(v - high * 100000000)), 8);
}

static inline void ctp_jsonw_u64(struct ctp_jsonw *w, uint64_t v)
{
	ctp_jsonw_reserve(w, CTP_JSONW_NUMBER_ROOM);
	w->len = (size_t)(ctp_jsonw_put_u64(w, w->buf + w->len, v) - w->buf);
}

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

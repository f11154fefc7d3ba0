#include "ctp/jsonw.h"

#include <stdio.h>
#include <stdlib.h>

void ctp_jsonw_init(struct ctp_jsonw *w)
{
	w->buf = NULL;
	w->len = 0;
	w->cap = 0;
	w->high = UINT64_MAX; /* no number's: UINT64_MAX / 10^8 is far below */
	w->high_len = 0;
	ctp_jsonw_grow(w, 4096);
}

void ctp_jsonw_free(struct ctp_jsonw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

void ctp_jsonw_grow(struct ctp_jsonw *w, size_t n)
{
	size_t cap = w->cap ? w->cap : 4096;
	while (cap - w->len < n)
		cap *= 2;
	char *buf = realloc(w->buf, cap);
	if (!buf) {
		/* The collector cannot go on without memory for one line; nothing sensible to do.
		 */
		fputs("ctp: out of memory in the JSON writer\n", stderr);
		abort();
	}
	w->buf = buf;
	w->cap = cap;
}

/* Two decimal digits at a time: halves the divisions of a digit-by-digit loop. */
static const char digit_pairs[201] = "00010203040506070809"
				     "10111213141516171819"
				     "20212223242526272829"
				     "30313233343536373839"
				     "40414243444546474849"
				     "50515253545556575859"
				     "60616263646566676869"
				     "70717273747576777879"
				     "80818283848586878889"
				     "90919293949596979899";

/* Exactly four digits of v < 10000 at p, and exactly eight of v < 10^8. */
static inline __attribute__((always_inline)) void put4(char *p, uint32_t v)
{
	memcpy(p, digit_pairs + 2 * (v / 100), 2);
	memcpy(p + 2, digit_pairs + 2 * (v % 100), 2);
}

static inline __attribute__((always_inline)) void put8(char *p, uint32_t v)
{
	put4(p, v / 10000);
	put4(p + 4, v % 10000);
}

/* How many decimal digits v has (1 for 0): the bit length tells it to within one. */
static inline __attribute__((always_inline)) unsigned digits_u32(uint32_t v)
{
	static const uint32_t pow10[] = {1,	 10,	  100,	    1000,      10000,
					 100000, 1000000, 10000000, 100000000, 1000000000};
	unsigned bits = 32 - (unsigned)__builtin_clz(v | 1);
	unsigned t = (bits * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */
	return t + ((v | 1) >= pow10[t]);
}

/* The digits of v (any length) at p; returns their count. */
static inline __attribute__((always_inline)) unsigned put_u32(char *p, uint32_t v)
{
	unsigned n = digits_u32(v);
	char *end = p + n;
	while (v >= 100) {
		memcpy(end - 2, digit_pairs + 2 * (v % 100), 2);
		end -= 2;
		v /= 100;
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
	return n;
}

/* The digits of the part above the last eight of a number >= 10^8, into the writer's cache. */
/* Out of line: it runs once a tenth of a second, and inline it would make every number pay for
 * the registers it needs. */
static __attribute__((noinline)) void cache_high(struct ctp_jsonw *w, uint64_t high)
{
	char *p = w->high_digits;
	if (high < 100000000) {
		w->high_len = (uint8_t)put_u32(p, (uint32_t)high);
	} else {
		unsigned n = put_u32(p, (uint32_t)(high / 100000000));
		put8(p + n, (uint32_t)(high % 100000000));
		w->high_len = (uint8_t)(n + 8);
	}
	w->high = high;
}

/* Numbers of trace lines are written straight into the line. Nearly all are small ids or
 * nanosecond timestamps, whose digits above the last eight change every tenth of a second: those
 * are copied from the previous number's, and the last eight come from 32-bit arithmetic. */
void ctp_jsonw_u64(struct ctp_jsonw *w, uint64_t v)
{
	ctp_jsonw_reserve(w, 20 + sizeof(w->high_digits));
	char *p = w->buf + w->len;
	if (v < 100000000) {
		w->len += put_u32(p, (uint32_t)v);
		return;
	}
	uint64_t high = v / 100000000;
	if (high != w->high)
		cache_high(w, high);
	memcpy(p, w->high_digits, sizeof(w->high_digits));
	put8(p + w->high_len, (uint32_t)(v % 100000000));
	w->len += w->high_len + 8u;
}

void ctp_jsonw_i64(struct ctp_jsonw *w, int64_t v)
{
	if (v < 0) {
		CTP_JSONW_LIT(w, "-");
		ctp_jsonw_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		ctp_jsonw_u64(w, (uint64_t)v);
	}
}

void ctp_jsonw_hex(struct ctp_jsonw *w, uint64_t v)
{
	static const char hexd[] = "0123456789abcdef";
	char tmp[20];
	char *end = tmp + sizeof(tmp);
	char *p = end;
	*--p = '"';
	do {
		*--p = hexd[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	ctp_jsonw_raw(w, p, (size_t)(end - p));
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not valid: overlong
 * forms, surrogates and code points above U+10FFFF are refused, as RFC 3629 says. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	unsigned cp;
	if (c < 0xC2)
		return 0; /* continuation byte or overlong 2-byte lead */
	if (c < 0xE0) {
		len = 2;
		cp = c & 0x1F;
		min = 0x80;
	} else if (c < 0xF0) {
		len = 3;
		cp = c & 0x0F;
		min = 0x800;
	} else if (c < 0xF5) {
		len = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

void ctp_jsonw_strn(struct ctp_jsonw *w, const char *str, size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	/* Worst case: every byte becomes \ufffd (6 bytes) or \u00XX (6 bytes), plus the quotes. */
	ctp_jsonw_reserve(w, n * 6 + 2);
	char *o = w->buf + w->len;
	*o++ = '"';
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
			i++;
		} else if (c < 0x20) {
			*o++ = '\\';
			switch (c) {
			case '\n':
				*o++ = 'n';
				break;
			case '\t':
				*o++ = 't';
				break;
			case '\r':
				*o++ = 'r';
				break;
			default:
				*o++ = 'u';
				*o++ = '0';
				*o++ = '0';
				*o++ = hexd[c >> 4];
				*o++ = hexd[c & 15];
			}
			i++;
		} else {
			size_t len = utf8_seq_len(s + i, n - i);
			if (len) {
				memcpy(o, s + i, len);
				o += len;
				i += len;
			} else {
				memcpy(o, "\\ufffd", 6);
				o += 6;
				i++;
			}
		}
	}
	*o++ = '"';
	w->len = (size_t)(o - w->buf);
}

void ctp_jsonw_str(struct ctp_jsonw *w, const char *s)
{
	if (!s)
		ctp_jsonw_null(w);
	else
		ctp_jsonw_strn(w, s, strlen(s));
}

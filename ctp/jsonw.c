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

/* The digits of the part above the last eight of a number >= 10^8. Out of line: it runs once a
 * tenth of a second, and inline it would make every number pay for the registers it needs. */
__attribute__((noinline)) void ctp_jsonw_cache_high(struct ctp_jsonw *w, uint64_t high)
{
	char *p = w->high_digits;
	/* high < 2^64 / 10^8 < 10^12: at most four digits above another eight. */
	if (high >= 100000000) {
		uint32_t top = (uint32_t)(high / 100000000);
		p = ctp_jsonw_put_digits(p, ctp_jsonw_digits8(top), ctp_jsonw_digit_count(top));
		p = ctp_jsonw_put_digits(p, ctp_jsonw_digits8((uint32_t)(high % 100000000)), 8);
	} else {
		p = ctp_jsonw_put_digits(p, ctp_jsonw_digits8((uint32_t)high),
					 ctp_jsonw_digit_count((uint32_t)high));
	}
	w->high_len = (uint8_t)(p - w->high_digits);
	w->high = high;
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

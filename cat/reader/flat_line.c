#include "cat/reader/flat_line.h"

#include <string.h>

/* Integers of up to this many digits always fit an int64_t (and jansson's json_int_t). */
#define MAX_DIGITS 18

struct scan {
	const char *p, *end;
};

static void skip_space(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
		s->p++;
}

/* A string of plain printable ASCII; anything jansson would have to unescape or check as
 * UTF-8 (or reject: control bytes) makes the line jansson's. */
static bool plain_string(struct scan *s, const char **str, uint32_t *len)
{
	if (s->p == s->end || *s->p != '"')
		return false;
	const char *start = ++s->p;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p;
		if (c == '"') {
			*str = start;
			*len = (uint32_t)(s->p - start);
			s->p++;
			return true;
		}
		if (c < 0x20 || c >= 0x7f || c == '\\')
			return false;
		s->p++;
	}
	return false;
}

static bool literal(struct scan *s, const char *word, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

/* -?(0|[1-9][0-9]*), at most MAX_DIGITS digits, not followed by a fraction or exponent. */
static bool integer(struct scan *s, int64_t *out)
{
	bool negative = s->p < s->end && *s->p == '-';
	if (negative)
		s->p++;
	const char *digits = s->p;
	uint64_t v = 0;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		v = v * 10 + (uint64_t)(*s->p++ - '0');
	size_t n = (size_t)(s->p - digits);
	if (n == 0 || n > MAX_DIGITS || (n > 1 && digits[0] == '0'))
		return false;
	if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
		return false;
	*out = negative ? -(int64_t)v : (int64_t)v;
	return true;
}

static bool value(struct scan *s, struct ctp_flat_field *f)
{
	if (s->p == s->end)
		return false;
	switch (*s->p) {
	case '"':
		f->kind = CTP_FLAT_STRING;
		return plain_string(s, &f->str, &f->str_len);
	case 'n':
		f->kind = CTP_FLAT_NULL;
		return literal(s, "null", 4);
	case 't':
		f->kind = CTP_FLAT_TRUE;
		return literal(s, "true", 4);
	case 'f':
		f->kind = CTP_FLAT_FALSE;
		return literal(s, "false", 5);
	default:
		f->kind = CTP_FLAT_INT;
		return integer(s, &f->num);
	}
}

bool ctp_flat_scan(const char *text, size_t len, struct ctp_flat_line *out)
{
	struct scan s = {text, text + len};
	out->n = 0;
	skip_space(&s);
	if (s.p == s.end || *s.p++ != '{')
		return false;
	skip_space(&s);
	if (s.p < s.end && *s.p == '}') {
		s.p++;
	} else {
		for (;;) {
			if (out->n == CTP_FLAT_MAX_FIELDS)
				return false;
			struct ctp_flat_field *f = &out->fields[out->n++];
			skip_space(&s);
			if (!plain_string(&s, &f->key, &f->key_len))
				return false;
			skip_space(&s);
			if (s.p == s.end || *s.p++ != ':')
				return false;
			skip_space(&s);
			if (!value(&s, f))
				return false;
			skip_space(&s);
			if (s.p == s.end)
				return false;
			char c = *s.p++;
			if (c == '}')
				break;
			if (c != ',')
				return false;
		}
	}
	skip_space(&s);
	return s.p == s.end;
}

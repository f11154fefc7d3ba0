/* Decimal fractions are parsed digit by digit rather than with strtod, so that "1.000000001s"
 * is exactly one nanosecond past a second. */
#include "cat/duration.h"

#include <ctype.h>
#include <string.h>

static const struct {
	const char *suffix;
	uint64_t ns;
} units[] = {
	{"ns", 1},	   {"us", 1000},       {"ms", 1000000},
	{"s", 1000000000}, {"m", 60000000000}, {"h", 3600000000000},
};

/* Digits and an optional fraction; `*rest` is what follows. False when there are no digits. */
static bool parse_number(const char *s, uint64_t *whole, const char **frac, size_t *frac_len,
			 const char **rest)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return false;
	*whole = 0;
	for (; isdigit((unsigned char)*p); p++) {
		if (*whole > (UINT64_MAX - 9) / 10)
			return false;
		*whole = *whole * 10 + (uint64_t)(*p - '0');
	}
	*frac = NULL;
	*frac_len = 0;
	if (*p == '.') {
		*frac = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		*frac_len = (size_t)(p - *frac);
		if (*frac_len == 0)
			return false;
	}
	*rest = p;
	return true;
}

bool ctp_cat_parse_duration(const char *s, uint64_t *out)
{
	uint64_t whole;
	const char *frac, *unit_text;
	size_t frac_len;
	if (!parse_number(s, &whole, &frac, &frac_len, &unit_text))
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit_text, units[i].suffix) != 0)
			continue;
		uint64_t unit = units[i].ns;
		if (whole > UINT64_MAX / unit)
			return false;
		uint64_t ns = whole * unit;
		/* Fraction digits below a nanosecond are dropped. */
		uint64_t scale = unit;
		for (size_t d = 0; d < frac_len && scale >= 10; d++) {
			scale /= 10;
			uint64_t add = (uint64_t)(frac[d] - '0') * scale;
			if (ns > UINT64_MAX - add)
				return false;
			ns += add;
		}
		*out = ns;
		return true;
	}
	return false;
}

bool ctp_cat_parse_time(const char *s, struct ctp_cat_time *out)
{
	uint64_t whole;
	const char *frac, *rest;
	size_t frac_len;
	if (!parse_number(s, &whole, &frac, &frac_len, &rest))
		return false;
	if (*rest == '\0' && !frac) {
		/* Digits alone: an absolute instant, as the trace writes it. */
		out->ns = whole;
		out->relative = false;
		return true;
	}
	out->relative = true;
	return ctp_cat_parse_duration(s, &out->ns);
}

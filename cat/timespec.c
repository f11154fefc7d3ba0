/* Parsing --since/--until values. Decimal fractions are parsed digit by digit rather than with
 * strtod, so that "1.000000001s" is exactly one nanosecond past a second. */
#include "cat/timespec.h"

#include <ctype.h>
#include <string.h>

static const struct {
	const char *suffix;
	uint64_t ns;
} units[] = {
	{"ns", 1},
	{"us", 1000},
	{"ms", 1000000},
	{"s", 1000000000},
};

bool ctp_cat_parse_time(const char *s, struct ctp_cat_time *out)
{
	uint64_t whole = 0;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return false;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	const char *frac = NULL;
	size_t frac_len = 0;
	if (*p == '.') {
		frac = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		frac_len = (size_t)(p - frac);
		if (frac_len == 0)
			return false;
	}
	if (*p == '\0') {
		/* Digits alone: an absolute time, as the trace writes it. */
		if (frac)
			return false;
		out->ns = whole;
		out->relative = false;
		return true;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) != 0)
			continue;
		uint64_t unit = units[i].ns;
		if (whole > UINT64_MAX / unit)
			return false;
		uint64_t ns = whole * unit;
		/* Fraction digits below a nanosecond are dropped. */
		uint64_t scale = unit;
		for (size_t d = 0; d < frac_len && scale >= 10; d++) {
			scale /= 10;
			ns += (uint64_t)(frac[d] - '0') * scale;
		}
		out->ns = ns;
		out->relative = true;
		return true;
	}
	return false;
}

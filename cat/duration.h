/* Times on ctp-cat's command line, parsed by one rule (docs/ctp-cat.md, "Times"): a duration is
 * a number with its unit — ns, us, ms, s, m or h, fractions allowed (1.5s, 200ms, 3us) — and a
 * bare number is never a duration. --since and --until take a duration, counted from the trace
 * header's `start`, or digits alone: an absolute CLOCK_MONOTONIC instant in nanoseconds, as the
 * trace writes its times. --missed-after and --never-yielded-after take a duration. */
#ifndef CTP_CAT_DURATION_H
#define CTP_CAT_DURATION_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a duration into nanoseconds; false when `s` is not one (no unit, an unknown unit, or
 * more than 64 bits of nanoseconds). */
bool ctp_cat_parse_duration(const char *s, uint64_t *ns);

struct ctp_cat_time {
	uint64_t ns;
	bool relative; /* ns counts from the trace header's `start` */
};

/* Parses a --since/--until value: a duration (relative) or digits alone (absolute). */
bool ctp_cat_parse_time(const char *s, struct ctp_cat_time *out);

/* The absolute time `t` stands for in a trace that started at `start_ns`. */
static inline uint64_t ctp_cat_time_resolve(const struct ctp_cat_time *t, uint64_t start_ns)
{
	return t->relative ? start_ns + t->ns : t->ns;
}

#endif

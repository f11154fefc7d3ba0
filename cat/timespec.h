/* Times on ctp-cat's command line: --since and --until take either an absolute CLOCK_MONOTONIC
 * time in nanoseconds (digits alone, as the trace writes them) or a time relative to the trace's
 * start, a number with a unit: 1.5s, 200ms, 3us, 40ns. */
#ifndef CTP_CAT_TIMESPEC_H
#define CTP_CAT_TIMESPEC_H

#include <stdbool.h>
#include <stdint.h>

struct ctp_cat_time {
	uint64_t ns;
	bool relative; /* ns counts from the trace header's `start` */
};

/* Parses `s`; false when it is neither form (or does not fit in 64 bits of nanoseconds). */
bool ctp_cat_parse_time(const char *s, struct ctp_cat_time *out);

/* The absolute time `t` stands for in a trace that started at `start_ns`. */
static inline uint64_t ctp_cat_time_resolve(const struct ctp_cat_time *t, uint64_t start_ns)
{
	return t->relative ? start_ns + t->ns : t->ns;
}

#endif

/* What every part of the collector shares: the output, the symbolizer and the clock. */
#ifndef CTP_COLLECTOR_COLLECTOR_H
#define CTP_COLLECTOR_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/emit.h"
#include "ctp/clock.h"
#include "ctp/symbolize.h"

struct ctp_collector {
	struct ctp_emitter em;
	struct ctp_symbolizer *sym;
	struct ctp_tsc_model tsc; /* valid when have_tsc, through ctp_collector_tsc */
	bool have_tsc;
	uint64_t corrupt_rings; /* times a ring was found corrupt and skipped */
};

/* The TSC's rate is measured from the collector's start to the first reading it converts (or
 * its first tick), at least this long: no time is spent waiting for it, where the program
 * starts. */
enum { CTP_COLLECTOR_TSC_CALIBRATE_MS = 2 };

/* The TSC model, with its rate measured by now. */
static inline struct ctp_tsc_model *ctp_collector_tsc(struct ctp_collector *c)
{
	if (__builtin_expect(!ctp_tsc_model_has_rate(&c->tsc), 0))
		ctp_tsc_model_finish(&c->tsc, CTP_COLLECTOR_TSC_CALIBRATE_MS);
	return &c->tsc;
}

#endif

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
	struct ctp_tsc_model tsc; /* valid when have_tsc */
	bool have_tsc;
	uint64_t corrupt_rings; /* times a ring was found corrupt and skipped */
};

#endif

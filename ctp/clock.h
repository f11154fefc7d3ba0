/* The clock of ring records and stations. The preload reads the TSC where it is invariant (about
 * 11 ns against 28 ns for clock_gettime on the machines we measured), and the collector converts
 * readings to CLOCK_MONOTONIC nanoseconds with a rate it measures itself. */
#ifndef CTP_CLOCK_H
#define CTP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t ctp_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ctp_tsc(void)
{
	return __rdtsc();
}
#endif

/* True when this CPU has an invariant TSC (CPUID 0x80000007 EDX bit 8): one rate on all
 * cores, through frequency changes and idle states. */
bool ctp_tsc_is_invariant(void);

/* Converts TSC readings to CLOCK_MONOTONIC ns. Anchored at one (tsc, ns) pair; the rate is
 * refined from the latest pair each time ctp_tsc_model_update is called, so its error shrinks
 * as the run goes on. */
struct ctp_tsc_model {
	uint64_t tsc0, ns0;
	double ns_per_tick;
};

/* Takes the anchor and a first rate by watching both clocks for `calibrate_ms`. */
void ctp_tsc_model_init(struct ctp_tsc_model *m, unsigned calibrate_ms);
void ctp_tsc_model_update(struct ctp_tsc_model *m);
uint64_t ctp_tsc_model_ns(const struct ctp_tsc_model *m, uint64_t tsc);

#endif

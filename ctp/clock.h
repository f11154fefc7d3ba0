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

/* The TSC and CLOCK_MONOTONIC read at one moment, to within a few hundred ns even on a busy
 * machine. */
void ctp_clock_pair(uint64_t *tsc, uint64_t *ns);

/* True when this CPU has an invariant TSC (CPUID 0x80000007 EDX bit 8): one rate on all
 * cores, through frequency changes and idle states. */
bool ctp_tsc_is_invariant(void);

/* True when the kernel trusts the TSC: it keeps time with it (its current clocksource is "tsc"),
 * or it runs on a hypervisor that promises a stable TSC (the CPU flag "tsc_reliable", with which
 * the kernel itself stops checking the TSC). Elsewhere (hpet, an unstable TSC the kernel gave up
 * on) the TSC and CLOCK_MONOTONIC may drift apart or jump between CPUs, and tracing reads
 * CLOCK_MONOTONIC itself. */
bool ctp_kernel_trusts_tsc(void);

/* Converts TSC readings to CLOCK_MONOTONIC ns. The rate is measured from a calibration anchor
 * and refined at each ctp_tsc_model_update. A new rate never applies to readings already
 * converted: the model is a chain of pieces, each starting where the previous one ends (so a
 * conversion is continuous and never goes back in time, however the rate changes over hours),
 * each pointed to close the gap to CLOCK_MONOTONIC gently over the next second. Readings are
 * converted with the piece they fall in, as long as it is among the last CTP_TSC_PIECES. */
enum { CTP_TSC_PIECES = 64 };
struct ctp_tsc_piece {
	uint64_t tsc0, ns0;
	double ns_per_tick;
};
struct ctp_tsc_model {
	struct ctp_tsc_piece piece[CTP_TSC_PIECES]; /* a ring, oldest at `first` */
	unsigned first, count;
	uint64_t cal_tsc, cal_ns; /* the calibration anchor */
	double ns_per_tick;	  /* the latest measured rate */
	/* The piece the last conversion used, and the readings that fall in it: those r with
	 * r - hint_lo < hint_span (ctp_tsc_model_ns; hint_span 0 when none is known). */
	struct ctp_tsc_piece hint_piece;
	uint64_t hint_lo, hint_span;
};

/* Takes the anchor and a first rate by watching both clocks for `calibrate_ms`. */
void ctp_tsc_model_init(struct ctp_tsc_model *m, unsigned calibrate_ms);
/* The same in two halves, so that the wait costs nothing: _begin takes the anchor; the model
 * has no rate (count == 0) until _finish, which measures it from the anchor to now, spinning
 * only if the anchor is less than `calibrate_ms` old. */
void ctp_tsc_model_begin(struct ctp_tsc_model *m);
void ctp_tsc_model_finish(struct ctp_tsc_model *m, unsigned calibrate_ms);
static inline bool ctp_tsc_model_has_rate(const struct ctp_tsc_model *m)
{
	return m->count > 0;
}
/* Refines the model with a fresh reading of both clocks... */
void ctp_tsc_model_update(struct ctp_tsc_model *m);
/* ...or with a given pair (tsc, ns) read at one moment. */
void ctp_tsc_model_update_with(struct ctp_tsc_model *m, uint64_t tsc, uint64_t ns);
/* A reading converted with one piece. */
static inline uint64_t ctp_tsc_piece_ns(const struct ctp_tsc_piece *p, uint64_t tsc)
{
	int64_t dt = (int64_t)(tsc - p->tsc0);
	return p->ns0 + (uint64_t)(int64_t)((double)dt * p->ns_per_tick);
}

/* ctp_tsc_model_ns for a reading outside the last piece used. */
uint64_t ctp_tsc_model_ns_search(struct ctp_tsc_model *m, uint64_t tsc);

/* Not const: it remembers the piece it used, where the next reading most likely falls too.
 * Inline for that case: the collector converts every record's time. */
static inline uint64_t ctp_tsc_model_ns(struct ctp_tsc_model *m, uint64_t tsc)
{
	if (tsc - m->hint_lo < m->hint_span)
		return ctp_tsc_piece_ns(&m->hint_piece, tsc);
	return ctp_tsc_model_ns_search(m, tsc);
}

#endif

#include "ctp/clock.h"

#include <cpuid.h>

bool ctp_tsc_is_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1u;
}

/* One (tsc, ns) pair, with the TSC read on both sides of clock_gettime to halve its error. A
 * pair taken across a preemption is off by as much as the thread was away (milliseconds on a
 * busy machine), so the tightest of several tries is kept. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best_width = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t t0 = ctp_tsc();
		uint64_t n = ctp_monotonic_ns();
		uint64_t t1 = ctp_tsc();
		if (t1 - t0 < best_width) {
			best_width = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

void ctp_tsc_model_init(struct ctp_tsc_model *m, unsigned calibrate_ms)
{
	sample(&m->tsc0, &m->ns0);
	uint64_t tsc, ns;
	do
		sample(&tsc, &ns);
	while (ns - m->ns0 < (uint64_t)calibrate_ms * 1000000u || tsc == m->tsc0);
	m->ns_per_tick = (double)(ns - m->ns0) / (double)(tsc - m->tsc0);
}

void ctp_tsc_model_update(struct ctp_tsc_model *m)
{
	uint64_t tsc, ns;
	sample(&tsc, &ns);
	if (tsc > m->tsc0 && ns > m->ns0)
		m->ns_per_tick = (double)(ns - m->ns0) / (double)(tsc - m->tsc0);
}

uint64_t ctp_tsc_model_ns(const struct ctp_tsc_model *m, uint64_t tsc)
{
	int64_t dt = (int64_t)(tsc - m->tsc0);
	return m->ns0 + (uint64_t)(int64_t)((double)dt * m->ns_per_tick);
}

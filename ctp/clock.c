#include "ctp/clock.h"

#include <cpuid.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

bool ctp_tsc_is_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1u;
}

/* The TSC is read on both sides of clock_gettime to halve the pair's error. A pair taken
 * across a preemption is off by as much as the thread was away (milliseconds on a busy
 * machine), so the tightest of several tries is kept. */
void ctp_clock_pair(uint64_t *tsc, uint64_t *ns)
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

/* Reads the start of a file into buf (NUL-terminated); raw syscalls: the preload reads these
 * before anything of the program's is set up. */
static long read_head(const char *path, char *buf, size_t size)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = 0, r;
	while ((size_t)n < size - 1 && (r = syscall(SYS_read, fd, buf + n, size - 1 - n)) > 0)
		n += r;
	syscall(SYS_close, fd);
	buf[n] = 0;
	return n;
}

bool ctp_kernel_trusts_tsc(void)
{
	char buf[8192];
	if (read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
		      sizeof(buf)) >= 3 &&
	    strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == 0))
		return true;
	/* The first CPU's flags are enough: the flag is the hypervisor's, for every CPU. */
	if (read_head("/proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return false;
	const char *flags = strstr(buf, "\nflags");
	const char *end = flags ? strchr(flags + 1, '\n') : NULL;
	const char *hit = flags ? strstr(flags, " tsc_reliable") : NULL;
	return hit && (!end || hit < end);
}

static const struct ctp_tsc_piece *latest(const struct ctp_tsc_model *m)
{
	return &m->piece[(m->first + m->count - 1) % CTP_TSC_PIECES];
}

static void add_piece(struct ctp_tsc_model *m, struct ctp_tsc_piece p)
{
	m->hint_span = 0; /* the hinted piece may have ended here, or left the ring */
	if (m->count == CTP_TSC_PIECES) {
		m->first = (m->first + 1) % CTP_TSC_PIECES;
		m->count--;
	}
	m->piece[(m->first + m->count) % CTP_TSC_PIECES] = p;
	m->count++;
}

void ctp_tsc_model_init(struct ctp_tsc_model *m, unsigned calibrate_ms)
{
	ctp_tsc_model_begin(m);
	ctp_tsc_model_finish(m, calibrate_ms);
}

void ctp_tsc_model_begin(struct ctp_tsc_model *m)
{
	memset(m, 0, sizeof(*m));
	ctp_clock_pair(&m->cal_tsc, &m->cal_ns);
}

void ctp_tsc_model_finish(struct ctp_tsc_model *m, unsigned calibrate_ms)
{
	uint64_t tsc, ns;
	do
		ctp_clock_pair(&tsc, &ns);
	while (ns - m->cal_ns < (uint64_t)calibrate_ms * 1000000u || tsc == m->cal_tsc);
	m->ns_per_tick = (double)(ns - m->cal_ns) / (double)(tsc - m->cal_tsc);
	add_piece(m, (struct ctp_tsc_piece){m->cal_tsc, m->cal_ns, m->ns_per_tick});
}

/* A new piece's rate differs from the measured one by at most this fraction: it closes a gap of
 * up to 1 ms a second, and stays positive whatever the gap. */
#define MAX_SLEW 1e-3
#define SLEW_SECONDS 1.0

void ctp_tsc_model_update_with(struct ctp_tsc_model *m, uint64_t tsc, uint64_t ns)
{
	const struct ctp_tsc_piece *last = latest(m);
	if (tsc <= last->tsc0 || tsc <= m->cal_tsc || ns <= m->cal_ns)
		return;
	m->ns_per_tick = (double)(ns - m->cal_ns) / (double)(tsc - m->cal_tsc);
	uint64_t here = ctp_tsc_piece_ns(last, tsc);
	double gap = (double)(int64_t)(ns - here); /* > 0: the model is behind */
	double rate = m->ns_per_tick * (1.0 + gap / (SLEW_SECONDS * 1e9));
	double lo = m->ns_per_tick * (1.0 - MAX_SLEW), hi = m->ns_per_tick * (1.0 + MAX_SLEW);
	rate = rate < lo ? lo : rate > hi ? hi : rate;
	add_piece(m, (struct ctp_tsc_piece){tsc, here, rate});
}

void ctp_tsc_model_update(struct ctp_tsc_model *m)
{
	if (!ctp_tsc_model_has_rate(m)) {
		ctp_tsc_model_finish(m, 1);
		return;
	}
	uint64_t tsc, ns;
	ctp_clock_pair(&tsc, &ns);
	ctp_tsc_model_update_with(m, tsc, ns);
}

static const struct ctp_tsc_piece *nth(const struct ctp_tsc_model *m, unsigned k)
{
	return &m->piece[(m->first + k) % CTP_TSC_PIECES];
}

/* Whether the reading falls in the k-th piece: at or after its start (any reading before the
 * oldest kept falls in that one), before the next one's. */
static bool falls_in(const struct ctp_tsc_model *m, unsigned k, uint64_t tsc)
{
	return (k == 0 || (int64_t)(tsc - nth(m, k)->tsc0) >= 0) &&
	       (k + 1 == m->count || (int64_t)(tsc - nth(m, k + 1)->tsc0) < 0);
}

/* The readings that fall in the k-th piece, as [lo, lo + span) modulo 2^64: falls_in's signed
 * differences, each a half of the circle, the first and last pieces open-ended. */
static void remember_hint(struct ctp_tsc_model *m, unsigned k)
{
	const uint64_t half = 1ull << 63;
	uint64_t lo = nth(m, k)->tsc0;
	uint64_t hi = k + 1 < m->count ? nth(m, k + 1)->tsc0 : lo + half;
	if (k == 0)
		lo = hi - half;
	m->hint_piece = *nth(m, k);
	m->hint_lo = lo;
	m->hint_span = k == 0 && k + 1 == m->count ? UINT64_MAX : hi - lo;
}

/* The collector converts the records of one pass after another, and a pass's readings lie in
 * one piece or two: the last one used is tried first (inline, ctp_tsc_model_ns). Looking back
 * from the newest cost ~90 instructions a trace line, the records being a reorder lag (one or
 * two 100 ms pieces) old. */
uint64_t ctp_tsc_model_ns_search(struct ctp_tsc_model *m, uint64_t tsc)
{
	for (unsigned k = m->count; k-- > 0;)
		if (falls_in(m, k, tsc)) {
			remember_hint(m, k);
			return ctp_tsc_piece_ns(nth(m, k), tsc);
		}
	return 0;
}

#include "pstack/source.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctp/atomics.h"
#include "ctp/clock.h"
#include "ctp/core_file.h"
#include "pstack/core_source.h"
#include "pstack/locate.h"

uint64_t pstack_source_head(struct pstack_source *src)
{
	if (!src->core)
		return pstack_live_head(src);
	/* A core does not change: its copy covers every block the header leads to. */
	const struct ctp_header *h = (const struct ctp_header *)src->view.base;
	return h->blocks_head;
}

bool pstack_source_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct pstack_source *src = arg;
	if (src->core)
		return ctp_read_core_memory(src->core, addr, buf, len);
	return ctp_read_pid_memory((void *)(uintptr_t)src->pid, addr, buf, len);
}

struct ctp_stackwalk *pstack_source_open_walk(struct pstack_source *src)
{
	if (src->core)
		return ctp_stackwalk_open_core(src->core, src->executable);
	return ctp_stackwalk_open_pid(src->pid, pstack_source_read, src);
}

bool pstack_source_thread_regs(const struct pstack_source *src, uint32_t tid, struct ctp_regs *out)
{
	const struct ctp_core_thread *t = src->core ? ctp_core_thread(src->core, tid) : NULL;
	if (t)
		*out = t->regs;
	return t != NULL;
}

/* The TSC's rate, measured here over 20 ms between pairs of readings that no preemption came
 * between (ctp_clock_pair). */
static double measure_tsc_rate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	struct ctp_tsc_model m;
	ctp_tsc_model_init(&m, 20);
	return m.ns_per_tick;
#else
	return 0.0; /* no TSC here: a segment that says TSC is not from this CPU */
#endif
}

/* Both clocks now: read as one pair where the segment's clock is the TSC, since a preemption
 * between two plain reads would shift every time computed from them by as long as it lasted. */
static void clocks_now(bool tsc, uint64_t *tsc_now, uint64_t *mono_now)
{
#if defined(__x86_64__) || defined(__i386__)
	if (tsc) {
		ctp_clock_pair(tsc_now, mono_now);
		return;
	}
#endif
	(void)tsc;
	*tsc_now = 0;
	*mono_now = ctp_monotonic_ns();
}

/* The TSC's rate over the segment's life: the header keeps both clocks read at its creation,
 * and seconds of baseline beat any short measurement on a busy machine (a 1 ms preemption in
 * a 20 ms measurement is a 5% error). A segment younger than 200 ms is measured here instead. */
static double tsc_rate_since_start(const struct ctp_header *h, uint64_t tsc_now, uint64_t mono_now)
{
	uint64_t start_tsc = CTP_LOAD_RELAXED(&h->start_tsc);
	uint64_t start_ns = CTP_LOAD_RELAXED(&h->start_mono_ns);
	if (tsc_now > start_tsc && mono_now > start_ns + 200000000ull)
		return (double)(mono_now - start_ns) / (double)(tsc_now - start_tsc);
	return measure_tsc_rate();
}

/* Now, for a live process. A monotonic clock is nanoseconds already. */
static void live_now(const struct ctp_header *h, struct pstack_now *out)
{
	bool tsc = CTP_LOAD_RELAXED(&h->clock_kind) == CTP_CLOCK_TSC;
	clocks_now(tsc, &out->raw, &out->mono_ns);
	if (!tsc) {
		out->raw = out->mono_ns;
		out->ns_per_tick = 1.0;
		return;
	}
	out->ns_per_tick = tsc_rate_since_start(h, out->raw, out->mono_ns);
}

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* When this machine booted (CLOCK_REALTIME seconds), 0 when unknown. */
static int64_t boot_time_s(void)
{
	FILE *f = fopen("/proc/stat", "re");
	long long btime = 0;
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return btime;
}

enum { MTIME_SLACK_NS = 50000000 };

/* Now, for a core: the moment the file was written, placed on this boot's clocks (so the core
 * must be of this boot, and the TSC's rate is this machine's); where that does not hold up, or
 * no switch can precede it, the latest switch the stations recorded. */
static void core_now(const struct pstack_source *src, const struct ctp_header *h,
		     uint64_t latest_raw, struct pstack_now *out)
{
	bool tsc = h->clock_kind == CTP_CLOCK_TSC;
	uint64_t tsc_now, mono_now;
	clocks_now(tsc, &tsc_now, &mono_now);
	int64_t since_written = realtime_ns() - src->core_written_ns;
	int64_t boot = boot_time_s();
	bool this_boot = boot > 0 && src->core_written_ns / 1000000000ll >= boot &&
			 since_written >= 0 && (uint64_t)since_written < mono_now;
	/* A segment of this boot shares this boot's TSC, so its creation is the baseline. */
	out->ns_per_tick = !tsc	       ? 1.0
			   : this_boot ? tsc_rate_since_start(h, tsc_now, mono_now)
				       : measure_tsc_rate();
	if (this_boot && out->ns_per_tick > 0) {
		out->mono_ns = mono_now - (uint64_t)since_written;
		out->raw = tsc ? tsc_now - (uint64_t)((double)since_written / out->ns_per_tick)
			       : out->mono_ns;
		/* File times come from a coarse clock (a tick of a few ms, later under load):
		 * the segment's creation and a switch that precede the dump can both look later
		 * than the file's time by that much. A program that crashes within that tick of
		 * its start writes a core that looks older than its segment. */
		uint64_t slack = (uint64_t)(MTIME_SLACK_NS / out->ns_per_tick);
		if (out->mono_ns + MTIME_SLACK_NS >= h->start_mono_ns &&
		    out->raw + slack >= latest_raw) {
			if (out->mono_ns < h->start_mono_ns) {
				out->mono_ns = h->start_mono_ns;
				out->raw = tsc ? h->start_tsc : h->start_mono_ns;
			}
			if (out->raw < latest_raw) {
				out->mono_ns += (uint64_t)((double)(latest_raw - out->raw) *
							   out->ns_per_tick);
				out->raw = latest_raw;
			}
			return;
		}
	}
	out->at_latest_switch = true;
	out->raw = latest_raw;
	out->mono_ns = latest_raw;
	if (tsc)
		out->mono_ns = latest_raw > h->start_tsc && out->ns_per_tick > 0
				       ? h->start_mono_ns +
						 (uint64_t)((double)(latest_raw - h->start_tsc) *
							    out->ns_per_tick)
				       : h->start_mono_ns;
}

void pstack_source_now(const struct pstack_source *src, uint64_t latest_raw, struct pstack_now *out)
{
	const struct ctp_header *h = (const struct ctp_header *)src->view.base;
	memset(out, 0, sizeof(*out));
	if (src->core)
		core_now(src, h, latest_raw, out);
	else
		live_now(h, out);
}

void pstack_source_close(struct pstack_source *src)
{
	if (src->core)
		pstack_core_close(src);
	else
		pstack_live_close(src);
}

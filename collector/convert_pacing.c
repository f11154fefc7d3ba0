#include "collector/convert_pacing.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WINDOW_NS 2000000ull /* 2 ms of wanting a CPU: one verdict */
/* While holding, a window of converting after 20 ms, then after twice as long each time the CPUs
 * are still busy, up to 160 ms: a probe converts for 4-8 ms (a turn is more than a window), so
 * probes every 20 ms would take back a sixth to a quarter of what the hold gives the program. */
#define PROBE_FIRST_NS 20000000ull
#define PROBE_MAX_NS 160000000ull

void ctp_convert_pacing_init(struct ctp_convert_pacing *p, uint64_t hold_ms, uint64_t spool_limit,
			     const struct ctp_cpu_time *cpu_now, uint32_t cpus,
			     struct ctp_program_waited program)
{
	memset(p, 0, sizeof(*p));
	p->cpus = cpus;
	p->enabled = hold_ms > 0 && cpu_now;
	p->hold_ns = hold_ms * 1000000ull;
	p->hold_bytes = spool_limit / 4;
	p->start_bytes = spool_limit / 8;
	p->program = program;
	p->program_window = CTP_WAITED_UNKNOWN;
	if (cpu_now)
		p->window = *cpu_now;
	if (p->enabled && program.read)
		p->program_window = program.read(program.ctx);
}

/* Whether the program's threads waited for a CPU a quarter as long as the converter ran in the
 * window: the converter took CPUs from it. Unknown counts as yes: the run queues decide alone.
 * Read at every window's end, so that each verdict weighs one window's waits. */
static bool program_waited(struct ctp_convert_pacing *p, uint64_t ran)
{
	uint64_t then = p->program_window;
	uint64_t now = p->program.read ? p->program.read(p->program.ctx) : CTP_WAITED_UNKNOWN;
	p->program_window = now;
	if (then == CTP_WAITED_UNKNOWN || now == CTP_WAITED_UNKNOWN || now < then)
		return true;
	return (now - then) * 4 >= ran;
}

static void end_hold(struct ctp_convert_pacing *p, uint64_t now)
{
	p->holding = false;
	p->held_ns += now - p->held_since;
}

bool ctp_convert_pacing_convert_now(struct ctp_convert_pacing *p, uint64_t now, uint64_t pending,
				    bool ending)
{
	if (!p->holding)
		return true;
	if (pending >= p->hold_bytes)
		p->overrun = true;
	if (ending || p->overrun || now - p->held_since >= p->hold_ns) {
		if (p->overrun && !ending)
			p->spool_ends++;
		end_hold(p, now);
		return true;
	}
	return now >= p->next_probe;
}

void ctp_convert_pacing_turn_done(struct ctp_convert_pacing *p, uint64_t now, uint64_t pending,
				  const struct ctp_cpu_time *cpu_now, uint32_t others_runnable)
{
	if (!p->enabled)
		return;
	if (pending == 0)
		p->overrun = false;
	if (others_runnable != CTP_RUNNABLE_UNKNOWN) {
		p->samples++;
		p->full_samples += others_runnable >= p->cpus;
	}
	uint64_t ran = cpu_now->ran - p->window.ran;
	uint64_t waited = cpu_now->waited - p->window.waited;
	if (ran + waited < WINDOW_NS)
		return; /* too little yet to tell */
	p->window = *cpu_now;
	/* Waiting alone misses a converter that preempts the program on waking (the scheduler
	 * favours a thread that slept): the run queues then show the program's threads waiting,
	 * and the program's own waits confirm it (the run queues count threads that do not run). */
	bool program_kept_waiting = program_waited(p, ran);
	bool busy = waited * 4 >= ran + waited ||
		    (p->full_samples * 2 > p->samples && program_kept_waiting);
	p->samples = p->full_samples = 0;
	if (p->holding) {
		if (!busy) {
			end_hold(p, now);
			return;
		}
		if (p->probe_every < PROBE_MAX_NS)
			p->probe_every *= 2;
		p->next_probe = now + p->probe_every;
	} else if (busy && pending < p->start_bytes && !p->overrun) {
		p->holding = true;
		p->held_since = now;
		p->probe_every = PROBE_FIRST_NS;
		p->next_probe = now + p->probe_every;
		p->holds++;
	}
}

int ctp_convert_pacing_wait_ms(const struct ctp_convert_pacing *p, uint64_t now)
{
	if (p->next_probe <= now)
		return 1;
	return (int)((p->next_probe - now + 999999) / 1000000);
}

int ctp_runnable_open(void)
{
	return open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

uint32_t ctp_runnable_others(int fd, uint32_t ours_runnable)
{
	/* "0.50 0.30 0.20 3/250 12345\n": 3 runnable now, this thread among them. */
	char buf[128];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return CTP_RUNNABLE_UNKNOWN;
	buf[n] = 0;
	unsigned running;
	if (sscanf(buf, "%*s %*s %*s %u/", &running) != 1)
		return CTP_RUNNABLE_UNKNOWN;
	uint32_t ours = 1 + ours_runnable;
	return running > ours ? running - ours : 0;
}

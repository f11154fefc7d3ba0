/* When the converter yields to a busy machine.
 *
 * Converting records into compressed lines is most of the collector's CPU: ~250 ns a switch
 * while it shares the CPUs with the program. A program that keeps every CPU busy (two
 * Boost.Fiber threads on two cores) loses that time from its own run: its ping-pong ran at 0.78
 * of its untraced speed, and at 0.92 with conversion held back (medians of 10 alternating runs).
 * The harvester still empties the rings on time, so holding back loses nothing: the records wait
 * in the spool, and are converted once a CPU is free.
 *
 * Whether the CPUs are busy is read from the converting thread's own scheduler totals
 * (/proc/thread-self/schedstat: time run, and time waited for a CPU while runnable), from the
 * run queues (/proc/loadavg: threads runnable now), and from the traced program's threads' own
 * waits (collector/program_waits.h). A window of WINDOW_NS of wanting a CPU is a busy machine
 * when a quarter or more of it was spent waiting, or when most samples taken in it found as many
 * runnable threads of others as there are CPUs and the program's threads waited, meanwhile, a
 * quarter as long as the converter ran. (The scheduler favours a thread that slept: the
 * converter may take a CPU from the program on waking without waiting at all. By its waits
 * alone, the ping-pong's runs of 0.4 s were held 0.2-0.4 s; with the run queues, 0.4 s each
 * time. The run queues alone held beside a one-thread program on two CPUs, for nothing: they
 * counted a third runnable thread in most samples, though right after no thread but the program
 * and the converter was in state R, and the program waited 0.1-0.5 ms in 200 ms. Its flat-out
 * ping-pong was held 150 times, for 5-8 s of an 11 s run.) Where the program's waits cannot be
 * read, the run queues decide alone. After a busy window conversion holds back, and probes now and
 * then by converting for another window. The hold ends when a probe finds a CPU free; when it has
 * lasted hold_ns, so that a live reader of the trace sees records at most about that late; when a
 * quarter of the spool waits, so that the harvester never waits for room; or when the run ends. A
 * hold starts only while less than an eighth of the spool waits: a long busy period alternates
 * holds with conversions of the whole backlog. After a hold ended on a quarter of the spool, none
 * starts until the spool has been emptied: such a load outruns holding (a flat-out ping-pong kept
 * 0.30 of its switches instead of 0.45-0.7, its converter idle while the spool filled, over and
 * over). */
#ifndef CTP_COLLECTOR_CONVERT_PACING_H
#define CTP_COLLECTOR_CONVERT_PACING_H

#include <stdbool.h>
#include <stdint.h>

#include "collector/program_waits.h"
#include "collector/schedstat.h"

/* The traced program's threads' total waits for a CPU (collector/program_waits.h), in ns, or
 * CTP_WAITED_UNKNOWN; read only when a window closes, as reading costs a read a thread. */
struct ctp_program_waited {
	uint64_t (*read)(void *ctx);
	void *ctx;
};

struct ctp_convert_pacing {
	bool enabled;		    /* holds allowed: a hold time set and the totals readable */
	uint64_t hold_ns;	    /* longest hold */
	uint64_t hold_bytes;	    /* a hold ends when this much waits */
	uint64_t start_bytes;	    /* a hold starts only when less than this waits */
	struct ctp_cpu_time window; /* the totals when the current window began */
	struct ctp_program_waited program;
	uint64_t program_window;	/* the program's waits when the window began, or unknown */
	uint32_t cpus;			/* online CPUs */
	uint32_t samples, full_samples; /* run-queue samples in the window, and those that found
					 * the CPUs taken without us */
	bool overrun; /* a hold ended on a quarter of the spool: none again until it is emptied */
	bool holding;
	uint64_t held_since;  /* while holding: when the hold began */
	uint64_t next_probe;  /* while holding: when to convert for a window again */
	uint64_t probe_every; /* and the wait before it, which grows while the CPUs stay busy */
	uint64_t holds;	      /* holds started, for the summary */
	uint64_t held_ns;     /* their total length */
	uint64_t spool_ends;  /* holds ended by a quarter of the spool waiting: the converter then
			       * took CPU time from the program, which a larger spool would have
			       * spared it (the summary says so) */
};

/* hold_ms 0, or cpu_now NULL (the totals cannot be read): never hold. */
void ctp_convert_pacing_init(struct ctp_convert_pacing *p, uint64_t hold_ms, uint64_t spool_limit,
			     const struct ctp_cpu_time *cpu_now, uint32_t cpus,
			     struct ctp_program_waited program);

/* Whether to convert now, `pending` spooled bytes waiting. `ending`: the run is finishing, or
 * something needs every record converted: never hold. */
bool ctp_convert_pacing_convert_now(struct ctp_convert_pacing *p, uint64_t now, uint64_t pending,
				    bool ending);

/* How many threads of other processes are runnable (ctp_runnable_others), or unknown. */
#define CTP_RUNNABLE_UNKNOWN UINT32_MAX

/* After a conversion turn, with the thread's totals now and a sample of the threads of others
 * that are runnable: may start or end a hold. */
void ctp_convert_pacing_turn_done(struct ctp_convert_pacing *p, uint64_t now, uint64_t pending,
				  const struct ctp_cpu_time *cpu_now, uint32_t others_runnable);

/* While holding: milliseconds until the next probe (at least 1). */
int ctp_convert_pacing_wait_ms(const struct ctp_convert_pacing *p, uint64_t now);

static inline bool ctp_convert_pacing_holding(const struct ctp_convert_pacing *p)
{
	return p->holding;
}

/* Opens /proc/loadavg, whose fourth field counts the runnable threads of the whole system; -1
 * when it cannot. */
int ctp_runnable_open(void);
/* The runnable threads that are not ours: the count, less this thread (running as it reads) and
 * `ours_runnable` more; CTP_RUNNABLE_UNKNOWN when it cannot be read. */
uint32_t ctp_runnable_others(int fd, uint32_t ours_runnable);

#endif

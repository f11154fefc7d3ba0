/* The one run tracker: which coroutine each thread runs, since when, and who resumed it. A
 * thread's switches come from its own ring, in order, so a run is known once the next switch on
 * its thread closes it; lines of different threads may interleave in any order. Used by the
 * analysis (the longest runs) and by the Chrome view (a slice per run). Memory follows the
 * threads of the live processes: a process's threads are dropped at its end. */
#ifndef CTP_CAT_MODEL_RUNS_H
#define CTP_CAT_MODEL_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/model/event.h"
#include "cat/model/idmap.h"

struct ctp_run {
	uint32_t pid, tid; /* pid 0: a free slot */
	bool open;	   /* a coroutine runs on the thread (coro, since start) */
	uint64_t coro, start;
	bool initial;	  /* it ran before the thread's first switch: no resume began it */
	uint64_t by;	  /* the coroutine that resumed it */
	const char *how;  /* how it was resumed (the switch's word) */
	uint64_t last_ts; /* the latest time seen on the thread */
};

struct ctp_runs {
	struct ctp_idmap index; /* (pid, tid) -> slot */
	struct ctp_run *runs;
	size_t n, cap;
};

/* What one switch did to its thread's runs. */
struct ctp_run_step {
	bool new_thread;      /* the first switch seen on this thread */
	struct ctp_run ended; /* the run the switch closed (ended.open false: none known) */
};

/* A `switch` event. `from_created_ts` and `from_created_tid` say when and where its `from` was
 * created (0: unknown): a thread's first switch leaves the coroutine that ran since then if it
 * was created on that thread. 0, or -1 when out of memory. */
int ctp_runs_switch(struct ctp_runs *r, const struct ctp_event *sw, uint64_t from_created_ts,
		    uint32_t from_created_tid, struct ctp_run_step *step);

/* The thread's run state (made when new, *made says so); NULL when out of memory. */
struct ctp_run *ctp_runs_thread(struct ctp_runs *r, uint32_t pid, uint32_t tid, bool *made);

/* Ends the process `pid`: calls `fn` for each of its threads (open or not), then forgets them. */
void ctp_runs_end_process(struct ctp_runs *r, uint32_t pid,
			  void (*fn)(void *ctx, const struct ctp_run *run), void *ctx);

void ctp_runs_free(struct ctp_runs *r);

#endif

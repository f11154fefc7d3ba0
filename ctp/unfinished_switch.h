/* A switch the process died in the middle of. A switch hook updates two stations, one after the
 * other: the coroutine it leaves (suspended, or left by setcontext), then the one it resumes
 * (running). A thread stopped for good between the two (SIGKILL, a crash on another thread,
 * another thread's exit_group) leaves no station running on it, though something ran there until
 * the end: the coroutine the hook was leaving, since the switch itself (the jump that follows
 * the hook) never happened. A coroutine's end marks its station exited first, naming the station
 * its thread resumes next (ended_to), and resumes that one after: a thread stopped between the
 * two was going to run that one, and nothing else runs there. The collector's final states of
 * a process and ctp-pstack's reading of a core name that coroutine running, on that thread. */
#ifndef CTP_UNFINISHED_SWITCH_H
#define CTP_UNFINISHED_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/station.h"

/* What the stations of one thread said, gathered over all of them. */
struct ctp_thread_tail {
	uint32_t tid;
	bool alive;		/* its own stack's station has not ended */
	bool any_running;	/* a station says running on it */
	uint32_t last_state;	/* state of the station it touched last */
	uint64_t last_ts;	/* and that station's last_switch (UINT64_MAX: it is torn) */
	uint32_t last_idx;	/* and its index */
	uint32_t last_ended_to; /* and its ended_to */
};

/* A station that a stopped thread was going to resume after an end, and that thread. */
struct ctp_resumed_next {
	uint32_t idx, tid;
};

struct ctp_unfinished_switches {
	struct ctp_thread_tail *slots; /* open-addressed by tid; tid 0 = empty */
	size_t cap, n;
	/* After ctp_unfinished_settle: the stations resumed next by threads stopped after an end,
	 * by index. */
	struct ctp_resumed_next *next;
	size_t nnext;
};

void ctp_unfinished_init(struct ctp_unfinished_switches *u);
void ctp_unfinished_free(struct ctp_unfinished_switches *u);

/* Takes in one station (any state) of the process stopped for good (gone, or a core). */
void ctp_unfinished_note(struct ctp_unfinished_switches *u, uint32_t idx,
			 const struct ctp_station_snapshot *s);

/* Once every station was noted: what the threads were stopped in the middle of. */
void ctp_unfinished_settle(struct ctp_unfinished_switches *u);

/* After ctp_unfinished_settle: whether station idx ran until the end, on the thread it puts in
 * *tid, though it does not say running: a thread was stopped while switching away from it, or
 * between a coroutine's end and its own resume. */
bool ctp_unfinished_was_running(const struct ctp_unfinished_switches *u, uint32_t idx,
				const struct ctp_station_snapshot *s, uint32_t *tid);

#endif

/* A switch the process died in the middle of. A switch hook updates two stations, one after the
 * other: the coroutine it leaves (suspended), then the one it resumes (running). A thread stopped
 * for good between the two (SIGKILL, a crash on another thread, another thread's exit_group)
 * leaves no station running on it, though something ran there until the end: the coroutine the
 * hook was leaving, since the switch itself (the jump that follows the hook) never happened.
 * The process's final states name that one running, as the program saw it. */
#ifndef CTP_COLLECTOR_UNFINISHED_SWITCH_H
#define CTP_COLLECTOR_UNFINISHED_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/station.h"

/* What the stations of one thread said, gathered over all of them. */
struct ctp_thread_tail {
	uint32_t tid;
	bool alive;	     /* its own stack's station has not ended */
	bool any_running;    /* a station says running on it */
	uint32_t last_state; /* state of the station it touched last */
	uint64_t last_ts;    /* and that station's last_switch */
	uint32_t last_idx;   /* and its index */
};

struct ctp_unfinished_switches {
	struct ctp_thread_tail *slots; /* open-addressed by tid; tid 0 = empty */
	size_t cap, n;
};

void ctp_unfinished_init(struct ctp_unfinished_switches *u);
void ctp_unfinished_free(struct ctp_unfinished_switches *u);

/* Takes in one station (any state) of the dead process. */
void ctp_unfinished_note(struct ctp_unfinished_switches *u, uint32_t idx,
			 const struct ctp_station_snapshot *s);

/* Once every station was noted: whether station idx is the coroutine a thread was leaving when
 * it was stopped in a switch, and so ran there until the end. */
bool ctp_unfinished_was_running(const struct ctp_unfinished_switches *u, uint32_t idx,
				const struct ctp_station_snapshot *s);

#endif

/* Tells, from the events of a trace being followed, when a live snapshot is whole: the
 * collector's `snapshot` line counts the `state` lines of its pid that follow it
 * (docs/trace-format.md); a snapshot without the count (ctp-pstack's) ends at the next line
 * that is not one of its states. One SIGUSR1 makes one round of snapshots, one per traced
 * process, written one after another: ctp-cat --follow --report shows one report per round. */
#ifndef CTP_CAT_ANALYSIS_SNAPSHOT_WATCH_H
#define CTP_CAT_ANALYSIS_SNAPSHOT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cat/model/event.h"
#include "cat/model/idmap.h"

struct ctp_snapshot_watch {
	struct ctp_idmap left;	/* (pid, 0) -> state lines still to come, of a counted snapshot */
	uint32_t open;		/* snapshots not whole yet, counted and not */
	uint32_t uncounted_pid; /* the open snapshot without a count, 0: none */
	bool whole;		/* a snapshot became whole since ctp_snapshot_watch_taken */
	uint64_t latest_ts;	/* `ts` of the latest snapshot that became whole */
	/* The event just taken in was a `state` line of an open snapshot, not a final state. */
	bool state_in_snapshot;
};

/* Takes in the next event. -1 when out of memory. */
int ctp_snapshot_watch_event(struct ctp_snapshot_watch *w, const struct ctp_event *ev);

/* Whether a round of snapshots is whole and none is still open: the model holds every state
 * they gave. */
bool ctp_snapshot_watch_due(const struct ctp_snapshot_watch *w);

/* Whether `ev` belongs to a round of snapshots (a `snapshot` or `state` line): a report due
 * before it waits for the rest of the round. */
bool ctp_snapshot_watch_in_round(const struct ctp_event *ev);

/* The due round was shown. */
void ctp_snapshot_watch_taken(struct ctp_snapshot_watch *w);

void ctp_snapshot_watch_free(struct ctp_snapshot_watch *w);

#endif

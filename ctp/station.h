/* Station seqlock. One writer at a time per station: the thread running (or creating) that
 * coroutine; hand-over between threads is ordered by the application's own synchronisation,
 * since a coroutine runs on one thread at a time. Readers retry while `seq` is odd or changed.
 * Every field is accessed through relaxed atomics; see ctp/CTP.md "Stations". */
#ifndef CTP_STATION_H
#define CTP_STATION_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"

/* Returns the odd sequence number, which ctp_station_write_end takes back: the one writer need
 * not read `seq` again. */
static inline uint32_t ctp_station_write_begin(struct ctp_station *s)
{
	uint32_t seq = CTP_LOAD_RELAXED(&s->seq) + 1;
	CTP_STORE_RELAXED(&s->seq, seq);
	/* Release fence: a reader that sees any of the stores below also sees seq odd. */
	CTP_FENCE_RELEASE();
	return seq;
}

static inline void ctp_station_write_end(struct ctp_station *s, uint32_t seq)
{
	/* Release: all stores above are visible to a reader that sees the even value. */
	CTP_STORE_RELEASE(&s->seq, seq + 1);
}

/* A consistent copy of a station, as the collector reads it. */
struct ctp_station_snapshot {
	uint32_t state;
	uint32_t kind;
	uint64_t coro;
	uint32_t tid;
	uint64_t entry;
	uint64_t created;
	uint64_t last_switch;
	uint64_t switches;
	uint64_t stack_lo;
	uint64_t stack_hi;
	int32_t wait_fd;
	uint32_t wait_op;
	uint32_t stack_len; /* clamped to the depth the caller gave */
	uint64_t saved_ctx;
	uint32_t ctx_kind;
	uint32_t stack_kind;
	uint32_t ended_to;
	/* No consistent copy could be had (ctp_station_read returned false): in a process stopped
	 * for good, its writer was stopped in the middle of this station's update. */
	bool torn;
	uint64_t frames[CTP_MAX_STACK_DEPTH];
};

/* Copies station `s` (with room for `depth` frames) into `out`. Returns false when no
 * consistent copy could be had in a bounded number of tries: the writer is mid-update, or died
 * there (its process crashed); `out` then holds the last, possibly torn, copy. */
bool ctp_station_read(const struct ctp_station *s, uint32_t depth,
		      struct ctp_station_snapshot *out);

#endif

/* Puts one process's records back in time order before they become lines.
 *
 * Each thread writes a ring of its own, and the harvester empties them one after the other, so
 * the records of a process arrive ring by ring: in an M:N program a coroutine made on one thread
 * and first run on another would be seen running before it was made, and its `coro` line would
 * come from its station, without its creator. Every ring is in time order by itself; merging the
 * rings by timestamp restores the order of the process. A record is let out only when no ring
 * can still bring an earlier one: the harvester marks each pass over a process's rings with the
 * time before which it took everything (CTP_SPOOL_PASS: when it began, or the last record it
 * took from a ring it left records in), and records stamped before the next-to-last such mark,
 * and some milliseconds before the last (for a thread preempted between stamping a record and
 * publishing it), are complete; when the harvester is idle and has left nothing in the rings or
 * the spool, a fixed lag in the past serves instead. */
#ifndef CTP_COLLECTOR_REORDER_H
#define CTP_COLLECTOR_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctp/segment.h"

/* Notes that travel in a ring's queue, in order with its records (never in a segment). */
enum {
	CTP_REORDER_LOSS = 0xE0,    /* ctp_reorder_note: `value` records dropped by the producer */
	CTP_REORDER_CORRUPT = 0xE1, /* ctp_reorder_note: `value` = CTP_BATCH_* flags */
};

struct ctp_reorder_note {
	struct ctp_rec h;
	uint64_t value;
};

static inline struct ctp_reorder_note ctp_reorder_note(uint8_t type, uint64_t value)
{
	return (struct ctp_reorder_note){
		.h = {.size = sizeof(struct ctp_reorder_note), .type = type}, .value = value};
}

/* Where each record kind keeps its clock reading: 1 with *ts set, 0 for notes and kinds that have
 * none (they take the time of the record before them in their ring). */
static inline int ctp_rec_ts(const struct ctp_rec *rec, uint64_t *ts)
{
	size_t at;
	switch (rec->type) {
	case CTP_REC_THREAD:
		at = offsetof(struct ctp_rec_thread, ts);
		break;
	case CTP_REC_CREATE:
	case CTP_REC_SWITCH:
	case CTP_REC_EXIT:
	case CTP_REC_FD:
		at = sizeof(struct ctp_rec);
		break;
	default:
		return 0;
	}
	if (rec->size < at + sizeof(uint64_t))
		return 0;
	memcpy(ts, (const uint8_t *)rec + at, sizeof(*ts));
	return 1;
}

/* A ring of items (a u64 timestamp, then the record), each whole in one piece: an item that
 * does not fit before the end starts again at the front, and `end` marks where the items at the
 * back stop. Wrapped (tail < head), the items are [head, end) and then [0, tail); else [head,
 * tail), empty when head == tail. Moving the unread items to the front instead moved more bytes
 * than were queued: the queue holds a reorder lag, and the lag is most of it. */
struct ctp_reorder_queue {
	uint8_t *buf;
	size_t head, tail, end, cap;
	uint64_t newest; /* timestamp of the newest record queued, ever */
};

struct ctp_reorder {
	struct ctp_reorder_queue *q; /* indexed by ring */
	size_t nq;
	size_t queued_bytes;
	/* The rings whose queues hold records, a binary min-heap by (head timestamp, ring): the
	 * next record out is the top's, found in log(rings) steps rather than by a look at every
	 * ring (a program of 64 threads spent most of the converter's time in that look). */
	uint32_t *heap;
	size_t nheap, heap_cap;
};

void ctp_reorder_free(struct ctp_reorder *r);

/* Queues a copy of a record of ring `ring` (or a note, ctp_reorder_note, after the ring's
 * records so far). False, with nothing queued, when there is no memory for it: the caller lets
 * out what is queued (ctp_reorder_release), which leaves room in the ring's queue, or lets the
 * record out itself. */
bool ctp_reorder_push(struct ctp_reorder *r, uint32_t ring, const struct ctp_rec *rec);

/* Lets out, oldest first, every queued record with a timestamp up to `until` (UINT64_MAX:
 * all of them). A ring's records keep their order among themselves. */
typedef void (*ctp_reorder_emit_fn)(void *ctx, uint32_t ring, const struct ctp_rec *rec);
void ctp_reorder_release(struct ctp_reorder *r, uint64_t until, ctp_reorder_emit_fn emit,
			 void *ctx);

#endif

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

/* One piece of a ring's queue: items (a u64 timestamp, then the record) one after another, each
 * whole in one chunk, read from `head` and written at `tail`. A queue is a list of chunks, so it
 * grows by one chunk at a time: as one buffer that doubled, it needed the old buffer and one of
 * twice the size at once, three times what it held, and under an address-space limit it ran out
 * long before the memory did. */
struct ctp_reorder_chunk {
	struct ctp_reorder_chunk *next;
	size_t head, tail;
	uint8_t data[];
};

/* A chunk's mapping, header included: whole pages, and room for the largest record (its size is
 * 16 bits) with its timestamp. Emptied chunks are kept for reuse, up to CTP_REORDER_SPARE_MAX:
 * enough for queues that take one while they give one back; past that, a burst's chunks are
 * unmapped. */
enum { CTP_REORDER_CHUNK_BYTES = 80 * 1024, CTP_REORDER_SPARE_MAX = 16 };
#define CTP_REORDER_CHUNK_DATA (CTP_REORDER_CHUNK_BYTES - sizeof(struct ctp_reorder_chunk))
_Static_assert(CTP_REORDER_CHUNK_DATA >= sizeof(uint64_t) + UINT16_MAX, "an item fits a chunk");

struct ctp_reorder_queue {
	struct ctp_reorder_chunk *first, *last; /* read from first, written into last */
	uint64_t newest;			/* timestamp of the newest record queued, ever */
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
	/* Emptied chunks kept for the next queue that needs one: a new chunk's pages are faults. */
	struct ctp_reorder_chunk *spare;
	size_t nspare;
	size_t held_bytes, held_peak; /* bytes of the chunks mapped, queued or spare; the most */
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

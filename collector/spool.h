/* A spool: the private, growable buffer where the harvester thread puts the records it took out
 * of one process's rings, until the converting thread has turned them into trace lines.
 *
 * One writer thread (the harvester) and one reader thread (the converter). The spool is a list
 * of chunks; the writer fills the last one, the reader empties the first one. Bytes become
 * visible to the reader only when the writer commits them, and the writer commits whole
 * batches, so the reader never sees part of one. A mutex orders each commit with the reads that
 * follow it; the bytes themselves are copied outside it (the writer never touches committed
 * bytes, the reader never touches uncommitted ones).
 *
 * Every spool of the collector draws its chunks from one budget, which bounds the memory that
 * all of them hold together (see ctp_spool_budget_room), and keeps a pool of free chunks that
 * have been touched already: the harvester must not take page faults on fresh memory, since a
 * page fault waits for the process's memory-map lock, which the other thread holds for long
 * stretches while the symbolizer maps and reads debug information. */
#ifndef CTP_COLLECTOR_SPOOL_H
#define CTP_COLLECTOR_SPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Chunks are this big (or as big as one request that does not fit in one). Small enough that
 * an idle process holds little, big enough that a busy ring needs one allocation per pass. */
#define CTP_SPOOL_CHUNK (256u << 10)

struct ctp_spool_chunk;

/* Shared by every spool. The counters are atomics: both threads read and write them. */
struct ctp_spool_budget {
	uint64_t limit;	  /* bytes all chunks, pooled ones included, may hold (lowered only
			   * where memory ran out below it) */
	uint64_t used;	  /* bytes of every chunk allocated now, pooled ones included */
	uint64_t pooled;  /* bytes of the free chunks in the pool */
	uint64_t pending; /* bytes committed and not yet read */
	uint64_t peak;	  /* the highest `used - pooled` seen */
	/* Chunks the pool is kept stocked with: none until the harvester first takes a chunk,
	 * then a few, twice as many each time it found the pool empty, up to pool_target_max (set
	 * once). A short or quiet program costs no stock it never uses; a busy one gets its stock
	 * after a pass or two. */
	size_t pool_target, pool_target_max;
	uint32_t pool_ran_dry; /* set by a take from an empty pool, cleared by the stocker */
	pthread_mutex_t pool_lock;
	struct ctp_spool_chunk *pool;
};

void ctp_spool_budget_init(struct ctp_spool_budget *b, uint64_t limit);
/* Frees the pool. Every spool must have been freed. */
void ctp_spool_budget_fini(struct ctp_spool_budget *b);
/* Tops the pool up with populated chunks, within the limit. Call it from the thread that may
 * take page faults (the converter), now and then. */
void ctp_spool_budget_stock(struct ctp_spool_budget *b);
/* The same, touching at most max_chunks new chunks: the page faults of a whole pool (tens of
 * milliseconds on a VM) are spread over the converter's passes, not paid at once. */
void ctp_spool_budget_stock_some(struct ctp_spool_budget *b, size_t max_chunks);

struct ctp_spool {
	pthread_mutex_t lock;	      /* guards the chunk list and each chunk's `committed` */
	struct ctp_spool_chunk *head; /* the reader's chunk (oldest) */
	struct ctp_spool_chunk *tail; /* the writer's chunk (newest) */
	struct ctp_spool_budget *budget;
	size_t wpos; /* writer only: end of the bytes written into tail, committed or not */
};

void ctp_spool_init(struct ctp_spool *s, struct ctp_spool_budget *b);
/* Frees every chunk, read or not. Neither thread may use the spool any more. */
void ctp_spool_free(struct ctp_spool *s);

/* Bytes the budget can still give (the pool's included), 0 when it is spent. */
uint64_t ctp_spool_budget_room(struct ctp_spool_budget *b);

/* ---- writer ---- */

/* Room for at least `min` contiguous bytes after what was written so far; `*room` says how many
 * there are. Takes a new chunk when the current one has less (the budget is charged; checking
 * that it has room is the caller's business). NULL when memory runs out for it: the budget's
 * limit is then lowered to what the spools hold (said once), so that the harvester stops
 * taking records. */
uint8_t *ctp_spool_write_room(struct ctp_spool *s, size_t min, size_t *room);
/* Makes the `n` bytes written at the last ctp_spool_write_room pointer visible to the reader. */
void ctp_spool_commit(struct ctp_spool *s, size_t n);
/* Gives the last chunk back to the budget when the reader has read all of it: an idle process
 * then holds no memory. */
void ctp_spool_trim(struct ctp_spool *s);

/* ---- reader ---- */

/* The committed bytes not read yet in the oldest chunk (whole batches), or NULL with *n = 0. */
const uint8_t *ctp_spool_peek(struct ctp_spool *s, size_t *n);
/* Marks `n` bytes from the last peek as read; a chunk read to its end is freed. */
void ctp_spool_consumed(struct ctp_spool *s, size_t n);

#endif

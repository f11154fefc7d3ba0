/* The one table ctp-cat keys things by: a pair of numbers (a pid or process record, and an id:
 * a coroutine, a stack, a thread, an fd) to a 32-bit index into the caller's own array. Every
 * part that looks things up by (pid, id) uses this, so that none keeps a table of its own kind.
 * Open addressing with linear probing, grown at half full; entries can be removed (backward
 * shift, no tombstones), so a table that forgets exited processes stays small. The first number
 * is 32 bits (pids and indexes are), so that a slot takes 16 bytes: with a million coroutines
 * the tables are a large part of ctp-cat's memory. */
#ifndef CTP_CAT_MODEL_IDMAP_H
#define CTP_CAT_MODEL_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTP_IDMAP_NONE UINT32_MAX

struct ctp_idmap_slot {
	uint64_t b;
	uint32_t a;
	uint32_t value; /* CTP_IDMAP_NONE: an empty slot */
};

/* The ids under one first key, when they are small and dense (the collector numbers a
 * process's coroutines from 1): an array indexed by id, 4 bytes an id instead of a 16-byte slot
 * of a half-full table. */
struct ctp_idmap_row {
	uint32_t a;
	uint32_t *values; /* CTP_IDMAP_NONE: absent */
	size_t cap, count;
};

#define CTP_IDMAP_ROWS 8

struct ctp_idmap {
	struct ctp_idmap_slot *slots;
	size_t mask, used; /* mask + 1 slots (0 before the first put) */
	/* Rows for up to CTP_IDMAP_ROWS first keys; an id too far above its row's count (a
	 * hand-made or damaged trace), or of a further key, goes to the slots. */
	struct ctp_idmap_row rows[CTP_IDMAP_ROWS];
	size_t nrows;
};

/* The value of (a, b), or CTP_IDMAP_NONE. */
uint32_t ctp_idmap_get(const struct ctp_idmap *m, uint32_t a, uint64_t b);

/* Sets (a, b) -> value (value != CTP_IDMAP_NONE). 0, or -1 when out of memory. */
int ctp_idmap_put(struct ctp_idmap *m, uint32_t a, uint64_t b, uint32_t value);

/* Removes (a, b) if it is there. */
void ctp_idmap_del(struct ctp_idmap *m, uint32_t a, uint64_t b);

/* Visits every entry; `fn` must not change the table. */
void ctp_idmap_each(const struct ctp_idmap *m,
		    void (*fn)(void *ctx, uint32_t a, uint64_t b, uint32_t value), void *ctx);

void ctp_idmap_free(struct ctp_idmap *m);

#endif

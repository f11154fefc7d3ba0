/* What the collector remembers of each coroutine of one process: a compact record (64 bytes),
 * so that memory grows with the number of coroutines, never with the number of switches. It is
 * enough to write the final `state` line of a coroutine whose station has been recycled. A
 * coroutine that ended leaves the table once its last events are converted (ended_coros.h):
 * the table holds the live ones. */
#ifndef CTP_COLLECTOR_CORO_TABLE_H
#define CTP_COLLECTOR_CORO_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	CTP_CORO_ANNOUNCED = 1, /* its `coro` line has been written */
	CTP_CORO_ENDED = 2,	/* its `coro_end` line has been written */
	CTP_CORO_FINAL = 4,	/* its `state` line has been written */
	CTP_CORO_THREAD = 8,	/* a thread's own coroutine (kind "thread") */
};

struct ctp_coro {
	uint64_t id;	   /* 0 = empty slot: coroutine ids start at 1 */
	uint64_t since;	   /* ns of its last switch, create or exit */
	uint32_t tid;	   /* thread that ran it last */
	uint32_t switches; /* resumes seen in the rings (saturates) */
	uint8_t state;	   /* enum ctp_coro_state, as the events tell it */
	uint8_t flags;
	/* The whole stack a switch line got for its suspend at station switches == epoch
	 * (deferred_stacks.c); 0 = none. */
	uint32_t deferred_stack;
	uint32_t deferred_epoch;
	/* The last two places it was unwound at in the collector, most recent first: a key of the
	 * call site and the stack pointer there (deferred_stacks.c), and the stack found. */
	uint64_t walked_key[2];
	uint32_t walked_stack[2];
};

struct ctp_coro_table {
	struct ctp_coro *slots;
	size_t cap; /* a power of two, or 0 */
	size_t count;
};

void ctp_coro_table_free(struct ctp_coro_table *t);

/* The slot `id` is looked for first. Fibonacci hashing: ids are mostly consecutive, the
 * multiply spreads them. */
static inline size_t ctp_coro_slot_of(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

void ctp_coro_table_grow(struct ctp_coro_table *t, size_t n);

/* Makes sure `n` inserts can follow without moving the slots (pointers stay valid). Inline:
 * every switch asks, and the table seldom grows. */
static inline void ctp_coro_table_reserve(struct ctp_coro_table *t, size_t n)
{
	/* Keep the load under 1/2 so that probes stay short. */
	if ((t->count + n) * 2 > t->cap)
		ctp_coro_table_grow(t, n);
}

struct ctp_coro *ctp_coro_find_probing(const struct ctp_coro_table *t, uint64_t id);

/* The record of `id`, NULL when it is not there. The load is under 1/2, so most lookups end at
 * the first slot: that look is inline, the probe along the run is not. */
static inline struct ctp_coro *ctp_coro_find(const struct ctp_coro_table *t, uint64_t id)
{
	if (!t->cap || !id)
		return NULL;
	struct ctp_coro *c = &t->slots[ctp_coro_slot_of(id, t->cap)];
	if (c->id == id)
		return c;
	return c->id ? ctp_coro_find_probing(t, id) : NULL;
}

struct ctp_coro *ctp_coro_insert(struct ctp_coro_table *t, uint64_t id);

/* The record of `id` (id != 0), made zeroed when new; *is_new says which. May move the slots
 * unless ctp_coro_table_reserve made room beforehand. */
static inline struct ctp_coro *ctp_coro_get(struct ctp_coro_table *t, uint64_t id, bool *is_new)
{
	struct ctp_coro *c = ctp_coro_find(t, id);
	*is_new = c == NULL;
	return c ? c : ctp_coro_insert(t, id);
}

/* Forgets `id` (nothing when it is not there). Moves other records: pointers into the table
 * are invalid afterwards. */
void ctp_coro_remove(struct ctp_coro_table *t, uint64_t id);

#endif

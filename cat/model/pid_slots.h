/* Per-coroutine (or per-stack) entries that live as long as their process: an array of items
 * keyed by (pid, id), whose slots an exited process gives back for the next to reuse. The
 * streaming views keep what they learn of each coroutine here, so that their memory follows the
 * live processes, not the trace's length. Each slot is on one chain: its process's, which
 * forgetting the process walks, or the free one, which a new entry takes from; both are O(1) an
 * entry (a search for a free slot from the start took a trace of two processes of 200,000
 * coroutines each, one after the other, 33 s). */
#ifndef CTP_CAT_MODEL_PID_SLOTS_H
#define CTP_CAT_MODEL_PID_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "cat/model/idmap.h"

/* How every item starts: its id, which forgetting its process needs to find it in the index
 * (the process is the chain's). An item type checks that it starts so with CTP_PID_SLOTS_ITEM. */
struct ctp_pid_slot_key {
	uint64_t id;
};

#define CTP_PID_SLOTS_ITEM(type, id_field)                                                         \
	_Static_assert(offsetof(type, id_field) == offsetof(struct ctp_pid_slot_key, id),          \
		       #type " starts as struct ctp_pid_slot_key")

struct ctp_pid_slots {
	struct ctp_idmap index; /* (pid, id) -> slot */
	struct ctp_idmap heads; /* (pid, 0) -> the first slot of its chain */
	void *items;
	uint32_t *next; /* per slot: the next on its chain, CTP_IDMAP_NONE at its end */
	size_t count, cap, cap_next, size;
	uint32_t free_head; /* CTP_IDMAP_NONE: no free slot */
};

/* An empty pool of items of item_size bytes. */
void ctp_pid_slots_init(struct ctp_pid_slots *t, size_t item_size);
void ctp_pid_slots_free(struct ctp_pid_slots *t);

/* The slot of (pid, id), or CTP_IDMAP_NONE when it has none. */
static inline uint32_t ctp_pid_slots_find(const struct ctp_pid_slots *t, uint32_t pid, uint64_t id)
{
	return ctp_idmap_get(&t->index, pid, id);
}

/* The slot of (pid, id): its own when it has one, else a new one whose item is zeroed but for
 * its key. CTP_IDMAP_NONE when out of memory. */
uint32_t ctp_pid_slots_take(struct ctp_pid_slots *t, uint32_t pid, uint64_t id);

/* Gives back every slot of process pid. */
void ctp_pid_slots_forget(struct ctp_pid_slots *t, uint32_t pid);

/* The item in slot `slot`; the address moves when a take grows the array. */
static inline void *ctp_pid_slots_item(const struct ctp_pid_slots *t, uint32_t slot)
{
	return (char *)t->items + (size_t)slot * t->size;
}

#endif

#include <stdbool.h>

#include "preload/unwind_memo.h"

/* The set of a place. */
static struct ctp_unwind_memo_entry *set_for(struct ctp_unwind_memo *m, uint64_t call_site,
					     uint32_t depth)
{
	uint64_t h = (call_site ^ ((uint64_t)depth << 24)) * 0x9e3779b97f4a7c15ull;
	return m->entry[(h >> 32) % CTP_UNWIND_MEMO_SETS];
}

static inline bool is_place(const struct ctp_unwind_memo_entry *e, uint64_t call_site,
			    uint32_t depth)
{
	return e->call_site == call_site && e->depth == depth;
}

/* The entry of a place in its set, NULL when the set does not hold it. */
static struct ctp_unwind_memo_entry *entry_of(struct ctp_unwind_memo *m, uint64_t call_site,
					      uint32_t depth)
{
	struct ctp_unwind_memo_entry *set = set_for(m, call_site, depth);
	for (int w = 0; w < CTP_UNWIND_MEMO_WAYS; w++)
		if (is_place(&set[w], call_site, depth))
			return &set[w];
	return NULL;
}

/* The word at addr, a slot of the stack walked (below its top, checked by the callers). */
static inline uint64_t word_at(uint64_t addr)
{
	return *(const uint64_t *)addr;
}

/* The depth of a suspend whose call site is stored at slot (8-aligned, in the stack below top):
 * 0 when it is no place to remember. */
static uint32_t depth_of(uint64_t slot, uint64_t top)
{
	if (slot % 8 || top <= slot || top - slot < 8 || top - slot > UINT32_MAX)
		return 0;
	return (uint32_t)(top - slot);
}

uint32_t ctp_unwind_memo_find(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top, uint32_t max,
			      const uint64_t **frames)
{
	uint32_t depth = depth_of(slot, top);
	if (depth == 0)
		return 0;
	uint64_t call_site = word_at(slot);
	const struct ctp_unwind_memo_entry *e = entry_of(m, call_site, depth);
	if (!e || e->n == 0)
		return 0;
	uint32_t n = e->n < max ? e->n : max;
	/* Each offset is below the depth noted, which is this stack's: every read is in it. */
	for (uint32_t k = 1; k < n; k++)
		if (word_at(slot + e->offset[k]) != e->frames[k])
			return 0;
	*frames = e->frames;
	return n;
}

void ctp_unwind_memo_note(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top,
			  const uint64_t *frames, uint32_t n)
{
	uint32_t depth = n ? depth_of(slot, top) : 0;
	if (depth == 0 || word_at(slot) != frames[0])
		return;
	struct ctp_unwind_memo_entry *e = entry_of(m, frames[0], depth);
	if (!e || e->n != 0) {
		/* A place walked for the first time, or one whose stack was not the one in
		 * memory: noted; remembered if it is walked again. A new place goes first in its
		 * set, and the set's other place, the one noted less lately, makes way. */
		_Static_assert(CTP_UNWIND_MEMO_WAYS == 2, "a new place moves the first one second");
		if (!e) {
			struct ctp_unwind_memo_entry *set = set_for(m, frames[0], depth);
			set[1] = set[0];
			e = &set[0];
		}
		e->call_site = frames[0];
		e->depth = depth;
		e->n = 0;
		return;
	}
	uint64_t at = slot;
	for (uint32_t k = 1; k < n; k++) {
		do
			at += 8;
		while (at + 8 <= top && word_at(at) != frames[k]);
		if (at + 8 > top)
			return; /* not in this stack (a frame the walk made up): not remembered */
		e->frames[k] = frames[k];
		e->offset[k] = (uint32_t)(at - slot);
	}
	e->frames[0] = frames[0];
	e->offset[0] = 0;
	e->n = n;
}

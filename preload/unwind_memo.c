#include <stdbool.h>

#include "preload/unwind_memo.h"

/* The set of a place. */
static uint32_t set_of(uint64_t call_site, uint32_t depth)
{
	uint64_t h = (call_site ^ ((uint64_t)depth << 24)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)((h >> 32) % CTP_UNWIND_MEMO_SETS);
}

static inline bool is_place(const struct ctp_unwind_memo_place *e, uint64_t call_site,
			    uint32_t depth)
{
	return e->call_site == call_site && e->depth == depth;
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

/* Whether the first n frames of st lie in the stack whose call site is at slot, where the walk
 * found them. Each offset is below the depth noted, which is this stack's: every read is in
 * it. */
static inline bool in_memory(const struct ctp_unwind_memo_stack *st, uint64_t slot, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++)
		if (word_at(slot + st->offset[k]) != st->frames[k])
			return false;
	return true;
}

uint32_t ctp_unwind_memo_find(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top, uint32_t max,
			      const uint64_t **frames)
{
	uint32_t depth = depth_of(slot, top);
	if (depth == 0)
		return 0;
	uint64_t call_site = word_at(slot);
	uint32_t set = set_of(call_site, depth);
	for (int w = 0; w < CTP_UNWIND_MEMO_WAYS; w++) {
		const struct ctp_unwind_memo_place *e = &m->place[set][w];
		if (!is_place(e, call_site, depth) || e->n == 0)
			continue;
		uint32_t n = e->n < max ? e->n : max;
		if (in_memory(&m->stack[set][w], slot, n)) {
			*frames = m->stack[set][w].frames;
			return n;
		}
	}
	return 0;
}

static bool same(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (a[k] != b[k])
			return false;
	return true;
}

/* A way of the set for a place not in it: an empty one, else each in turn. */
static int take_way(struct ctp_unwind_memo *m, uint32_t set)
{
	for (int w = 0; w < CTP_UNWIND_MEMO_WAYS; w++)
		if (m->place[set][w].call_site == 0)
			return w;
	return m->next_taken[set]++ % CTP_UNWIND_MEMO_WAYS;
}

/* Remembers the walked stack in way w of the set, with where each return address lies above
 * the call site's slot; leaves it not remembered (n = 0) if one is not in this stack (a frame
 * the walk made up). */
static void remember(struct ctp_unwind_memo *m, uint32_t set, int w, uint64_t slot, uint64_t top,
		     const uint64_t *frames, uint32_t n)
{
	struct ctp_unwind_memo_place *e = &m->place[set][w];
	struct ctp_unwind_memo_stack *st = &m->stack[set][w];
	e->n = 0;
	uint64_t at = slot;
	for (uint32_t k = 1; k < n; k++) {
		do
			at += 8;
		while (at + 8 <= top && word_at(at) != frames[k]);
		if (at + 8 > top)
			return;
		st->frames[k] = frames[k];
		st->offset[k] = (uint32_t)(at - slot);
	}
	st->frames[0] = frames[0];
	st->offset[0] = 0;
	e->n = n;
}

void ctp_unwind_memo_note(struct ctp_unwind_memo *m, uint64_t slot, uint64_t top,
			  const uint64_t *frames, uint32_t n)
{
	uint32_t depth = n ? depth_of(slot, top) : 0;
	if (depth == 0 || word_at(slot) != frames[0])
		return;
	uint32_t set = set_of(frames[0], depth);
	int walked_once = -1, same_frames = -1;
	bool has_stacks = false;
	for (int w = 0; w < CTP_UNWIND_MEMO_WAYS; w++) {
		const struct ctp_unwind_memo_place *e = &m->place[set][w];
		if (!is_place(e, frames[0], depth))
			continue;
		if (e->n == 0)
			walked_once = w;
		has_stacks |= e->n != 0;
		if (e->n == n && same(m->stack[set][w].frames, frames, n))
			same_frames = w;
	}
	/* The place's second walk, or another stack at a place remembered already (it was
	 * walked because none of the place's stacks is the one in memory): remembered. The same
	 * frames found elsewhere in memory (a return address that a local variable held too)
	 * are remembered where they were, not once more. A place walked for the first time is
	 * only noted, so that places seen once cost no search. */
	int w = walked_once >= 0 ? walked_once : same_frames >= 0 ? same_frames : take_way(m, set);
	m->place[set][w] = (struct ctp_unwind_memo_place){.call_site = frames[0], .depth = depth};
	if (walked_once >= 0 || has_stacks)
		remember(m, set, w, slot, top, frames, n);
}

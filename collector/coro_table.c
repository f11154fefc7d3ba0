#include "collector/coro_table.h"
#include "ctp/xalloc.h"

#include <stdlib.h>
#include <string.h>

void ctp_coro_table_free(struct ctp_coro_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void rehash(struct ctp_coro_table *t, size_t cap)
{
	struct ctp_coro *slots = ctp_xcalloc(cap, sizeof(*slots));
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].id)
			continue;
		size_t j = ctp_coro_slot_of(t->slots[i].id, cap);
		while (slots[j].id)
			j = (j + 1) & (cap - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
}

void ctp_coro_table_grow(struct ctp_coro_table *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 64;
	while ((t->count + n) * 2 > cap)
		cap *= 2;
	if (cap != t->cap)
		rehash(t, cap);
}

struct ctp_coro *ctp_coro_find_probing(const struct ctp_coro_table *t, uint64_t id)
{
	for (size_t j = ctp_coro_slot_of(id, t->cap);; j = (j + 1) & (t->cap - 1)) {
		if (t->slots[j].id == id)
			return &t->slots[j];
		if (!t->slots[j].id)
			return NULL;
	}
}

struct ctp_coro *ctp_coro_insert(struct ctp_coro_table *t, uint64_t id)
{
	ctp_coro_table_reserve(t, 1);
	size_t j = ctp_coro_slot_of(id, t->cap);
	while (t->slots[j].id)
		j = (j + 1) & (t->cap - 1);
	struct ctp_coro *c = &t->slots[j];
	memset(c, 0, sizeof(*c));
	c->id = id;
	t->count++;
	return c;
}

void ctp_coro_remove(struct ctp_coro_table *t, uint64_t id)
{
	struct ctp_coro *c = ctp_coro_find(t, id);
	if (!c)
		return;
	size_t mask = t->cap - 1, hole = (size_t)(c - t->slots);
	/* Backward-shift deletion: each record further along the probe run moves into the hole,
	 * which a lookup for it would otherwise stop at, unless its home slot lies between the
	 * hole and itself (cyclically). No tombstones: lookups stay as short as before. */
	for (size_t j = (hole + 1) & mask; t->slots[j].id; j = (j + 1) & mask) {
		size_t home = ctp_coro_slot_of(t->slots[j].id, t->cap);
		bool reachable =
			hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (reachable)
			continue;
		t->slots[hole] = t->slots[j];
		hole = j;
	}
	memset(&t->slots[hole], 0, sizeof(t->slots[hole]));
	t->count--;
}

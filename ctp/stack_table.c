#include "ctp/stack_table.h"
#include "ctp/xalloc.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_frames(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x243F6A8885A308D3ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
	}
	return h;
}

/* Most stacks compared are a switch's call site alone: a loop beats a call to memcmp. */
static bool frames_equal(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

void ctp_stack_table_free(struct ctp_stack_table *t)
{
	free(t->slots);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

static void grow_slots(struct ctp_stack_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct ctp_stack_slot *slots = ctp_xcalloc(cap, sizeof(*slots));
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].id)
			continue;
		size_t j = (size_t)t->slots[i].hash & (cap - 1);
		while (slots[j].id)
			j = (j + 1) & (cap - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
}

uint32_t ctp_stack_intern(struct ctp_stack_table *t, const uint64_t *frames, uint32_t n,
			  bool *is_new)
{
	if ((t->count + 1) * 2 > t->cap)
		grow_slots(t);
	uint64_t h = hash_frames(frames, n);
	size_t j = (size_t)h & (t->cap - 1);
	for (;; j = (j + 1) & (t->cap - 1)) {
		struct ctp_stack_slot *s = &t->slots[j];
		if (!s->id)
			break;
		if (s->hash == h && s->n == n && frames_equal(t->arena + s->frames_at, frames, n)) {
			*is_new = false;
			return s->id;
		}
	}
	if (t->arena_cap - t->arena_len < n) {
		size_t cap = t->arena_cap ? t->arena_cap : 4096;
		while (cap - t->arena_len < n)
			cap *= 2;
		t->arena = ctp_xrealloc(t->arena, cap * sizeof(*t->arena));
		t->arena_cap = cap;
	}
	memcpy(t->arena + t->arena_len, frames, n * sizeof(*frames));
	struct ctp_stack_slot *s = &t->slots[j];
	s->hash = h;
	s->frames_at = t->arena_len;
	s->n = n;
	s->id = (uint32_t)++t->count;
	t->arena_len += n;
	*is_new = true;
	return s->id;
}

/* Interned stacks of one process: each distinct list of frame addresses gets an id (from 1).
 * The collector writes a stack's `stack` line once, before the first line that refers to it;
 * ctp-pstack groups coroutines by it. Memory grows with the number of distinct stacks only. */
#ifndef CTP_STACK_TABLE_H
#define CTP_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctp_stack_slot {
	uint64_t hash;
	uint64_t frames_at; /* index of the first frame in the arena */
	uint32_t id;	    /* 0 = empty slot */
	uint32_t n;
};

struct ctp_stack_table {
	struct ctp_stack_slot *slots;
	size_t cap, count;
	uint64_t *arena; /* the frames of every interned stack, back to back */
	size_t arena_len, arena_cap;
};

void ctp_stack_table_free(struct ctp_stack_table *t);

/* The id of the stack `frames[0..n)` (n >= 1), interning it when new (*is_new). */
uint32_t ctp_stack_intern(struct ctp_stack_table *t, const uint64_t *frames, uint32_t n,
			  bool *is_new);

#endif

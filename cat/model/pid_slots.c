#include "cat/model/pid_slots.h"

#include <stdlib.h>
#include <string.h>

#include "cat/model/grow.h"

void ctp_pid_slots_init(struct ctp_pid_slots *t, size_t item_size)
{
	*t = (struct ctp_pid_slots){.size = item_size, .free_head = CTP_IDMAP_NONE};
}

void ctp_pid_slots_free(struct ctp_pid_slots *t)
{
	ctp_idmap_free(&t->index);
	ctp_idmap_free(&t->heads);
	free(t->items);
	free(t->next);
	ctp_pid_slots_init(t, t->size);
}

static struct ctp_pid_slot_key *key_at(const struct ctp_pid_slots *t, uint32_t slot)
{
	return ctp_pid_slots_item(t, slot);
}

uint32_t ctp_pid_slots_take(struct ctp_pid_slots *t, uint32_t pid, uint64_t id)
{
	uint32_t slot = ctp_idmap_get(&t->index, pid, id);
	if (slot != CTP_IDMAP_NONE)
		return slot;
	slot = t->free_head;
	if (slot != CTP_IDMAP_NONE) {
		t->free_head = t->next[slot];
	} else {
		if (t->count >= CTP_IDMAP_NONE ||
		    ctp_grow(&t->items, &t->cap, t->count + 1, t->size) < 0 ||
		    CTP_GROW(t->next, t->cap_next, t->count + 1) < 0)
			return CTP_IDMAP_NONE;
		slot = (uint32_t)t->count++;
	}
	if (ctp_idmap_put(&t->index, pid, id, slot) < 0) {
		t->next[slot] = t->free_head; /* back on the free chain, unused */
		t->free_head = slot;
		return CTP_IDMAP_NONE;
	}
	t->next[slot] = ctp_idmap_get(&t->heads, pid, 0);
	if (ctp_idmap_put(&t->heads, pid, 0, slot) < 0) {
		ctp_idmap_del(&t->index, pid, id);
		t->next[slot] = t->free_head;
		t->free_head = slot;
		return CTP_IDMAP_NONE;
	}
	memset(ctp_pid_slots_item(t, slot), 0, t->size);
	*key_at(t, slot) = (struct ctp_pid_slot_key){.id = id};
	return slot;
}

void ctp_pid_slots_forget(struct ctp_pid_slots *t, uint32_t pid)
{
	uint32_t i = ctp_idmap_get(&t->heads, pid, 0);
	while (i != CTP_IDMAP_NONE) {
		uint32_t next = t->next[i];
		ctp_idmap_del(&t->index, pid, key_at(t, i)->id);
		t->next[i] = t->free_head;
		t->free_head = i;
		i = next;
	}
	ctp_idmap_del(&t->heads, pid, 0);
}

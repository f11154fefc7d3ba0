#include "cat/model/names.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/model/grow.h"

/* Both kinds of entry start as struct ctp_cat_coro_name does: the 64-bit id, then the pid (0:
 * a free slot), so that one table of slots serves both (see struct slots). */
struct stack_name {
	uint64_t id;
	uint32_t pid;
	const char *top; /* interned */
};

_Static_assert(offsetof(struct stack_name, id) == offsetof(struct ctp_cat_coro_name, coro),
	       "entries keep their id at one place");
_Static_assert(offsetof(struct stack_name, pid) == offsetof(struct ctp_cat_coro_name, pid),
	       "entries keep their pid at one place");

/* Entries of one kind: an array whose freed slots (of exited processes) are reused. Each slot
 * is on one chain through `next`: its process's, which an exit walks to free them, or the free
 * one, which a new entry takes from. Both are O(1) an entry: a search for a free slot from the
 * start took a trace of two processes of 200,000 coroutines each, one after the other, 33 s. */
struct slots {
	struct ctp_idmap index; /* (pid, id) -> slot */
	struct ctp_idmap heads; /* (pid, 0) -> the first slot of its chain */
	void *items;
	uint32_t *next; /* per slot: the next on its chain, CTP_IDMAP_NONE at its end */
	size_t count, cap, cap_next, size;
	uint32_t free_head; /* CTP_IDMAP_NONE: no free slot */
};

struct ctp_cat_names {
	struct ctp_strings strings;
	struct slots coros;  /* struct ctp_cat_coro_name */
	struct slots stacks; /* struct stack_name */
	bool forget_pending; /* an exit was seen: drop its process at the next event */
	uint32_t forget_pid;
};

struct ctp_cat_names *ctp_cat_names_new(void)
{
	struct ctp_cat_names *n = calloc(1, sizeof(struct ctp_cat_names));
	if (n) {
		n->coros.size = sizeof(struct ctp_cat_coro_name);
		n->stacks.size = sizeof(struct stack_name);
		n->coros.free_head = n->stacks.free_head = CTP_IDMAP_NONE;
	}
	return n;
}

void ctp_cat_names_free(struct ctp_cat_names *n)
{
	if (!n)
		return;
	ctp_strings_free(&n->strings);
	struct slots *kinds[] = {&n->coros, &n->stacks};
	for (size_t k = 0; k < 2; k++) {
		ctp_idmap_free(&kinds[k]->index);
		ctp_idmap_free(&kinds[k]->heads);
		free(kinds[k]->items);
		free(kinds[k]->next);
	}
	free(n);
}

static uint32_t *pid_at(const struct slots *t, size_t i)
{
	return (uint32_t *)((char *)t->items + i * t->size + offsetof(struct stack_name, pid));
}

static uint64_t id_at(const struct slots *t, size_t i)
{
	return *(const uint64_t *)((const char *)t->items + i * t->size +
				   offsetof(struct stack_name, id));
}

/* The slot of (pid, id): its own when known, else a freed one or a new one. CTP_IDMAP_NONE
 * when out of memory. */
static uint32_t slot_of(struct slots *t, uint32_t pid, uint64_t id)
{
	uint32_t at = ctp_idmap_get(&t->index, pid, id);
	if (at != CTP_IDMAP_NONE)
		return at;
	uint32_t slot = t->free_head;
	if (slot != CTP_IDMAP_NONE) {
		t->free_head = t->next[slot];
	} else {
		if (t->count >= CTP_IDMAP_NONE ||
		    ctp_grow(&t->items, &t->cap, t->count + 1, t->size) < 0 ||
		    CTP_GROW(t->next, t->cap_next, t->count + 1) < 0)
			return CTP_IDMAP_NONE;
		slot = (uint32_t)t->count++;
	}
	t->next[slot] = ctp_idmap_get(&t->heads, pid, 0);
	if (ctp_idmap_put(&t->index, pid, id, slot) < 0 ||
	    ctp_idmap_put(&t->heads, pid, 0, slot) < 0)
		return CTP_IDMAP_NONE;
	return slot;
}

/* Frees the slots of process pid: its chain goes onto the free one. */
static void forget(struct slots *t, uint32_t pid)
{
	uint32_t i = ctp_idmap_get(&t->heads, pid, 0);
	while (i != CTP_IDMAP_NONE) {
		uint32_t next = t->next[i];
		ctp_idmap_del(&t->index, pid, id_at(t, i));
		*pid_at(t, i) = 0;
		t->next[i] = t->free_head;
		t->free_head = i;
		i = next;
	}
	ctp_idmap_del(&t->heads, pid, 0);
}

static int learn_coro(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	uint32_t at = slot_of(&n->coros, ev->pid, ev->coro);
	if (at == CTP_IDMAP_NONE)
		return -1;
	struct ctp_cat_coro_name *coros = n->coros.items;
	const char *entry = ev->coro_line.entry, *kind = ev->coro_line.kind_name;
	coros[at] = (struct ctp_cat_coro_name){
		.pid = ev->pid,
		.coro = ev->coro,
		.entry = entry ? ctp_strings_intern(&n->strings, entry, strlen(entry)) : NULL,
		.kind = kind ? ctp_strings_intern(&n->strings, kind, strlen(kind)) : NULL,
		.entry_addr = ev->coro_line.entry_addr,
		.created_ts = ev->ts,
		.created_tid = ev->tid,
	};
	return (entry && !coros[at].entry) || (kind && !coros[at].kind) ? -1 : 0;
}

static int learn_stack(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	uint32_t id = ev->stack_line.id;
	if (!id)
		return 0;
	const struct ctp_event_frame *top =
		ev->stack_line.nframes ? &ev->stack_line.frames[0] : NULL;
	char text[512];
	if (top && top->sym && top->has_off)
		snprintf(text, sizeof(text), "%s+0x%" PRIx64, top->sym, top->off);
	else if (top && top->sym)
		snprintf(text, sizeof(text), "%s", top->sym);
	else if (top && top->addr)
		snprintf(text, sizeof(text), "0x%" PRIx64, top->addr);
	else
		snprintf(text, sizeof(text), "?");
	uint32_t at = slot_of(&n->stacks, ev->pid, id);
	if (at == CTP_IDMAP_NONE)
		return -1;
	struct stack_name *stacks = n->stacks.items;
	stacks[at] =
		(struct stack_name){.pid = ev->pid,
				    .id = id,
				    .top = ctp_strings_intern(&n->strings, text, strlen(text))};
	return stacks[at].top ? 0 : -1;
}

int ctp_cat_names_see(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	if (n->forget_pending) {
		n->forget_pending = false;
		forget(&n->coros, n->forget_pid);
		forget(&n->stacks, n->forget_pid);
	}
	if (!ev->pid)
		return 0;
	if (ev->type == CTP_EV_CORO && ev->coro)
		return learn_coro(n, ev);
	if (ev->type == CTP_EV_STACK)
		return learn_stack(n, ev);
	if (ev->type == CTP_EV_EXIT) {
		/* Not now: the exit event itself names the coroutine that was running. */
		n->forget_pending = true;
		n->forget_pid = ev->pid;
	}
	return 0;
}

const struct ctp_cat_coro_name *ctp_cat_names_coro_info(const struct ctp_cat_names *n, uint32_t pid,
							uint64_t coro)
{
	uint32_t at = ctp_idmap_get(&n->coros.index, pid, coro);
	return at == CTP_IDMAP_NONE ? NULL : (const struct ctp_cat_coro_name *)n->coros.items + at;
}

const char *ctp_cat_names_entry(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro)
{
	const struct ctp_cat_coro_name *c = ctp_cat_names_coro_info(n, pid, coro);
	if (!c)
		return "?";
	return c->entry ? c->entry : c->kind ? c->kind : "?";
}

const char *ctp_cat_names_coro(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro,
			       char *buf, size_t size)
{
	snprintf(buf, size, "%s#%" PRIu64, ctp_cat_names_entry(n, pid, coro), coro);
	return buf;
}

const char *ctp_cat_names_stack_top(const struct ctp_cat_names *n, uint32_t pid, uint32_t stack)
{
	uint32_t at = ctp_idmap_get(&n->stacks.index, pid, stack);
	return at == CTP_IDMAP_NONE ? NULL : ((const struct stack_name *)n->stacks.items)[at].top;
}

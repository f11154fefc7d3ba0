#include "cat/names.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/model/grow.h"

struct stack_name {
	uint32_t pid; /* 0: a free slot */
	uint32_t id;
	const char *top; /* interned */
};

struct ctp_cat_names {
	struct ctp_strings strings;
	struct ctp_idmap coro_index; /* (pid, coro) -> coros[] */
	struct ctp_cat_coro_name *coros;
	size_t ncoros, cap_coros, free_coros;
	struct ctp_idmap stack_index; /* (pid, stack id) -> stacks[] */
	struct stack_name *stacks;
	size_t nstacks, cap_stacks, free_stacks;
	bool forget_pending; /* an exit was seen: drop its process at the next event */
	uint32_t forget_pid;
};

struct ctp_cat_names *ctp_cat_names_new(void)
{
	return calloc(1, sizeof(struct ctp_cat_names));
}

void ctp_cat_names_free(struct ctp_cat_names *n)
{
	if (!n)
		return;
	ctp_strings_free(&n->strings);
	ctp_idmap_free(&n->coro_index);
	ctp_idmap_free(&n->stack_index);
	free(n->coros);
	free(n->stacks);
	free(n);
}

/* A slot for a new entry: a freed one when there is one (slots of exited processes), else a
 * new one. `nfree` counts the freed ones, so that the search is skipped when there are none. */
static size_t slot_for(void **items, size_t *count, size_t *cap, size_t *nfree, size_t size)
{
	if (*nfree) {
		for (size_t i = 0; i < *count; i++) {
			if (*(const uint32_t *)((const char *)*items + i * size) == 0) {
				(*nfree)--;
				return i;
			}
		}
	}
	if (ctp_grow(items, cap, *count + 1, size) < 0)
		return SIZE_MAX;
	return (*count)++;
}

static int learn_coro(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	uint32_t at = ctp_idmap_get(&n->coro_index, ev->pid, ev->coro);
	if (at == CTP_IDMAP_NONE) {
		size_t slot = slot_for((void **)&n->coros, &n->ncoros, &n->cap_coros,
				       &n->free_coros, sizeof(*n->coros));
		if (slot == SIZE_MAX ||
		    ctp_idmap_put(&n->coro_index, ev->pid, ev->coro, (uint32_t)slot) < 0)
			return -1;
		at = (uint32_t)slot;
	}
	const char *entry = ev->coro_line.entry, *kind = ev->coro_line.kind_name;
	n->coros[at] = (struct ctp_cat_coro_name){
		.pid = ev->pid,
		.coro = ev->coro,
		.entry = entry ? ctp_strings_intern(&n->strings, entry, strlen(entry)) : NULL,
		.kind = kind ? ctp_strings_intern(&n->strings, kind, strlen(kind)) : NULL,
		.entry_addr = ev->coro_line.entry_addr,
		.created_ts = ev->ts,
		.created_tid = ev->tid,
	};
	return (entry && !n->coros[at].entry) || (kind && !n->coros[at].kind) ? -1 : 0;
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
	uint32_t at = ctp_idmap_get(&n->stack_index, ev->pid, id);
	if (at == CTP_IDMAP_NONE) {
		size_t slot = slot_for((void **)&n->stacks, &n->nstacks, &n->cap_stacks,
				       &n->free_stacks, sizeof(*n->stacks));
		if (slot == SIZE_MAX ||
		    ctp_idmap_put(&n->stack_index, ev->pid, id, (uint32_t)slot) < 0)
			return -1;
		at = (uint32_t)slot;
	}
	n->stacks[at] =
		(struct stack_name){.pid = ev->pid,
				    .id = id,
				    .top = ctp_strings_intern(&n->strings, text, strlen(text))};
	return n->stacks[at].top ? 0 : -1;
}

static void forget_process(struct ctp_cat_names *n, uint32_t pid)
{
	for (size_t i = 0; i < n->ncoros; i++) {
		if (n->coros[i].pid != pid)
			continue;
		ctp_idmap_del(&n->coro_index, pid, n->coros[i].coro);
		n->coros[i].pid = 0;
		n->free_coros++;
	}
	for (size_t i = 0; i < n->nstacks; i++) {
		if (n->stacks[i].pid != pid)
			continue;
		ctp_idmap_del(&n->stack_index, pid, n->stacks[i].id);
		n->stacks[i].pid = 0;
		n->free_stacks++;
	}
}

int ctp_cat_names_see(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	if (n->forget_pending) {
		n->forget_pending = false;
		forget_process(n, n->forget_pid);
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
	uint32_t at = ctp_idmap_get(&n->coro_index, pid, coro);
	return at == CTP_IDMAP_NONE ? NULL : &n->coros[at];
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
	uint32_t at = ctp_idmap_get(&n->stack_index, pid, stack);
	return at == CTP_IDMAP_NONE ? NULL : n->stacks[at].top;
}

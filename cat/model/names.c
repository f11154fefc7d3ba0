#include "cat/model/names.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/model/pid_slots.h"
#include "ctp/symbolize.h"

struct stack_name {
	uint64_t id;
	const char *top; /* interned */
};

CTP_PID_SLOTS_ITEM(struct stack_name, id);
CTP_PID_SLOTS_ITEM(struct ctp_cat_coro_name, coro);

struct ctp_cat_names {
	struct ctp_strings strings;
	struct ctp_pid_slots coros;  /* struct ctp_cat_coro_name */
	struct ctp_pid_slots stacks; /* struct stack_name */
	bool forget_pending;	     /* an exit was seen: drop its process at the next event */
	uint32_t forget_pid;
};

/* A coroutine's entry in a counting table. */
struct counted_name {
	struct ctp_cat_coro_name name;
	uint64_t count;
};

static struct ctp_cat_names *names_new(size_t coro_size)
{
	struct ctp_cat_names *n = calloc(1, sizeof(struct ctp_cat_names));
	if (n) {
		ctp_pid_slots_init(&n->coros, coro_size);
		ctp_pid_slots_init(&n->stacks, sizeof(struct stack_name));
	}
	return n;
}

struct ctp_cat_names *ctp_cat_names_new(void)
{
	return names_new(sizeof(struct ctp_cat_coro_name));
}

struct ctp_cat_names *ctp_cat_names_new_counting(void)
{
	return names_new(sizeof(struct counted_name));
}

void ctp_cat_names_free(struct ctp_cat_names *n)
{
	if (!n)
		return;
	ctp_strings_free(&n->strings);
	ctp_pid_slots_free(&n->coros);
	ctp_pid_slots_free(&n->stacks);
	free(n);
}

static int learn_coro(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	uint32_t at = ctp_pid_slots_take(&n->coros, ev->pid, ev->coro);
	if (at == CTP_IDMAP_NONE)
		return -1;
	struct ctp_cat_coro_name *c = ctp_pid_slots_item(&n->coros, at);
	const char *label = ev->coro_line.entry ? ev->coro_line.entry : ev->coro_line.kind_name;
	*c = (struct ctp_cat_coro_name){
		.pid = ev->pid,
		.coro = ev->coro,
		.label = label ? ctp_strings_intern(&n->strings, label, strlen(label)) : NULL,
		.entry_addr = ev->coro_line.entry_addr,
		.created_ts = ev->ts,
		.created_tid = ev->tid,
	};
	return label && !c->label ? -1 : 0;
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
		ctp_frame_place(text, sizeof(text), top->module, top->has_module_off,
				top->module_off, top->addr);
	else
		snprintf(text, sizeof(text), "?");
	uint32_t at = ctp_pid_slots_take(&n->stacks, ev->pid, id);
	if (at == CTP_IDMAP_NONE)
		return -1;
	struct stack_name *s = ctp_pid_slots_item(&n->stacks, at);
	s->top = ctp_strings_intern(&n->strings, text, strlen(text));
	return s->top ? 0 : -1;
}

int ctp_cat_names_see(struct ctp_cat_names *n, const struct ctp_event *ev)
{
	if (n->forget_pending) {
		n->forget_pending = false;
		ctp_pid_slots_forget(&n->coros, n->forget_pid);
		ctp_pid_slots_forget(&n->stacks, n->forget_pid);
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
	uint32_t at = ctp_pid_slots_find(&n->coros, pid, coro);
	return at == CTP_IDMAP_NONE ? NULL : ctp_pid_slots_item(&n->coros, at);
}

uint64_t *ctp_cat_names_count(struct ctp_cat_names *n, uint32_t pid, uint64_t coro)
{
	if (n->coros.size != sizeof(struct counted_name))
		return NULL;
	uint32_t at = ctp_pid_slots_take(&n->coros, pid, coro);
	if (at == CTP_IDMAP_NONE)
		return NULL;
	return &((struct counted_name *)ctp_pid_slots_item(&n->coros, at))->count;
}

const char *ctp_cat_names_entry(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro)
{
	const struct ctp_cat_coro_name *c = ctp_cat_names_coro_info(n, pid, coro);
	return c && c->label ? c->label : "?";
}

const char *ctp_cat_names_coro(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro,
			       char *buf, size_t size)
{
	snprintf(buf, size, "%s#%" PRIu64, ctp_cat_names_entry(n, pid, coro), coro);
	return buf;
}

const char *ctp_cat_names_stack_top(const struct ctp_cat_names *n, uint32_t pid, uint32_t stack)
{
	uint32_t at = ctp_pid_slots_find(&n->stacks, pid, stack);
	if (at == CTP_IDMAP_NONE)
		return NULL;
	const struct stack_name *s = ctp_pid_slots_item(&n->stacks, at);
	return s->top;
}

/* Coroutine and stack names, kept in jansson objects used as hash tables: keys are
 * "pid:id" strings. Two tables rather than one prefix-keyed table so that a process's entries
 * can be found and dropped without parsing keys of the other kind. */
#include "cat/names.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctp_cat_names {
	json_t *coros;	     /* "pid:coro" -> the coro line */
	json_t *stacks;	     /* "pid:id" -> "symbol+0xoff" */
	bool forget_pending; /* an exit line was seen: drop its process at the next line */
	uint64_t forget_pid;
};

struct ctp_cat_names *ctp_cat_names_new(void)
{
	struct ctp_cat_names *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->coros = json_object();
	n->stacks = json_object();
	if (!n->coros || !n->stacks) {
		ctp_cat_names_free(n);
		return NULL;
	}
	return n;
}

void ctp_cat_names_free(struct ctp_cat_names *n)
{
	if (!n)
		return;
	json_decref(n->coros);
	json_decref(n->stacks);
	free(n);
}

static void make_key(char *key, size_t size, uint64_t pid, uint64_t id)
{
	snprintf(key, size, "%" PRIu64 ":%" PRIu64, pid, id);
}

/* Drops every key "pid:..." of one process. */
static void forget_process(json_t *table, uint64_t pid)
{
	char prefix[32];
	int len = snprintf(prefix, sizeof(prefix), "%" PRIu64 ":", pid);
	const char *key;
	json_t *value;
	void *tmp;
	json_object_foreach_safe(table, tmp, key, value)
	{
		(void)value;
		if (strncmp(key, prefix, (size_t)len) == 0)
			json_object_del(table, key);
	}
}

static void learn_stack(struct ctp_cat_names *n, uint64_t pid, const json_t *line)
{
	uint64_t id;
	if (!ctp_cat_u64(line, "id", &id))
		return;
	json_t *top = json_array_get(json_object_get(line, "frames"), 0);
	const char *sym = json_string_value(json_object_get(top, "sym"));
	const char *addr = json_string_value(json_object_get(top, "addr"));
	uint64_t off = 0;
	char text[512];
	if (sym && ctp_cat_u64(top, "off", &off))
		snprintf(text, sizeof(text), "%s+0x%" PRIx64, sym, off);
	else if (sym)
		snprintf(text, sizeof(text), "%s", sym);
	else
		snprintf(text, sizeof(text), "%s", addr ? addr : "?");
	char key[48];
	make_key(key, sizeof(key), pid, id);
	json_object_set_new(n->stacks, key, json_string(text));
}

void ctp_cat_names_see(struct ctp_cat_names *n, const json_t *line)
{
	const char *type = ctp_cat_type(line);
	uint64_t pid, coro;
	if (n->forget_pending) {
		n->forget_pending = false;
		forget_process(n->coros, n->forget_pid);
		forget_process(n->stacks, n->forget_pid);
	}
	if (!ctp_cat_u64(line, "pid", &pid))
		return;
	if (strcmp(type, "coro") == 0 && ctp_cat_u64(line, "coro", &coro)) {
		char key[48];
		make_key(key, sizeof(key), pid, coro);
		json_object_set(n->coros, key, (json_t *)line);
	} else if (strcmp(type, "stack") == 0) {
		learn_stack(n, pid, line);
	} else if (strcmp(type, "exit") == 0) {
		/* Not now: the exit line itself names the coroutine that was running. */
		n->forget_pending = true;
		n->forget_pid = pid;
	}
}

json_t *ctp_cat_names_coro_line(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro)
{
	char key[48];
	make_key(key, sizeof(key), pid, coro);
	return json_object_get(n->coros, key);
}

const char *ctp_cat_names_entry(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro)
{
	json_t *line = ctp_cat_names_coro_line(n, pid, coro);
	if (!line)
		return "?";
	const char *entry = json_string_value(json_object_get(line, "entry"));
	if (entry)
		return entry;
	const char *kind = json_string_value(json_object_get(line, "kind"));
	return kind ? kind : "?";
}

const char *ctp_cat_names_coro(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro,
			       char *buf, size_t size)
{
	snprintf(buf, size, "%s#%" PRIu64, ctp_cat_names_entry(n, pid, coro), coro);
	return buf;
}

const char *ctp_cat_names_stack_top(const struct ctp_cat_names *n, uint64_t pid, uint64_t stack)
{
	char key[48];
	make_key(key, sizeof(key), pid, stack);
	return json_string_value(json_object_get(n->stacks, key));
}

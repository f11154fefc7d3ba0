/* What the human-facing formats need to name things while streaming: each coroutine's `coro`
 * line (entry symbol, kind, entry address, creation time) and each stack's innermost frame as
 * "symbol+0xoff". Learned from the lines as they pass; a process's entries are dropped after its
 * `exit` line, so memory follows the live processes, not the trace's length. */
#ifndef CTP_CAT_NAMES_H
#define CTP_CAT_NAMES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The unsigned integer field `key` of `obj`; false when missing, null or not an integer. */
static inline bool ctp_cat_u64(const json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* The line's `type`, "" when it has none. */
static inline const char *ctp_cat_type(const json_t *obj)
{
	const char *t = json_string_value(json_object_get(obj, "type"));
	return t ? t : "";
}

struct ctp_cat_names;

struct ctp_cat_names *ctp_cat_names_new(void);
void ctp_cat_names_free(struct ctp_cat_names *n);

/* Learns from `coro` and `stack` lines, forgets a process after its `exit` line (at the next
 * call); other lines are ignored. Call it for every line, before using the line. */
void ctp_cat_names_see(struct ctp_cat_names *n, const json_t *line);

/* The coroutine's `coro` line (borrowed), NULL when it was not seen. */
json_t *ctp_cat_names_coro_line(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro);

/* The coroutine's entry symbol, or its kind ("thread" for a thread's own stack) when the entry
 * is unknown, or "?" when the coroutine was not seen. */
const char *ctp_cat_names_entry(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro);

/* "entry#id" into `buf`; returns buf. */
const char *ctp_cat_names_coro(const struct ctp_cat_names *n, uint64_t pid, uint64_t coro,
			       char *buf, size_t size);

/* The innermost frame of the stack as "symbol+0xoff" (or its address when it has no symbol),
 * NULL when the stack was not seen. */
const char *ctp_cat_names_stack_top(const struct ctp_cat_names *n, uint64_t pid, uint64_t stack);

#endif

/* What the human-facing formats need to name things while streaming: each coroutine's `coro`
 * event (entry symbol, kind, entry address, where and when it was made) and each stack's
 * innermost frame as "symbol+0xoff". Learned from the events as they pass; a process's entries
 * are dropped after its `exit` event, so memory follows the live processes, not the trace's
 * length. Keyed by (pid, id) in the one table (cat/model/idmap.h). */
#ifndef CTP_CAT_NAMES_H
#define CTP_CAT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cat/model/event.h"

/* The 32-bit fields pair up (40 bytes): a trace may name millions of coroutines. */
struct ctp_cat_coro_name {
	uint64_t coro;
	uint32_t pid; /* 0 until its `coro` line (a counting table's entry made before it) */
	uint32_t created_tid;
	/* Its entry symbol, or its kind ("thread", ...) when the entry is unknown: the one a
	 * view shows (one pointer, not two: 8 MB of a text view over 10^6 coroutines). NULL when
	 * the `coro` event said neither. */
	const char *label;
	uint64_t entry_addr;
	uint64_t created_ts; /* 0 if unknown */
};

struct ctp_cat_names;

struct ctp_cat_names *ctp_cat_names_new(void);
/* The same, whose coroutines each also carry a count their view keeps (the coroTracer view's
 * seq): it lives and is forgotten with the name, so that it needs no table of its own. */
struct ctp_cat_names *ctp_cat_names_new_counting(void);
void ctp_cat_names_free(struct ctp_cat_names *n);

/* Learns from `coro` and `stack` events, forgets a process after its `exit` event (at the next
 * call); other events are ignored. Call it for every event, before using the event. Returns 0,
 * or -1 when out of memory. */
int ctp_cat_names_see(struct ctp_cat_names *n, const struct ctp_event *ev);

/* What the coroutine's `coro` event said, NULL when it was not seen. */
const struct ctp_cat_coro_name *ctp_cat_names_coro_info(const struct ctp_cat_names *n, uint32_t pid,
							uint64_t coro);

/* The count of a coroutine, 0 the first time it is asked for, in a table made counting; a
 * coroutine not seen yet gets an entry that names nothing. NULL when out of memory. */
uint64_t *ctp_cat_names_count(struct ctp_cat_names *n, uint32_t pid, uint64_t coro);

/* The coroutine's entry symbol, or its kind ("thread" for a thread's own stack) when the entry
 * is unknown, or "?" when the coroutine was not seen. */
const char *ctp_cat_names_entry(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro);

/* "entry#id" into `buf`; returns buf. */
const char *ctp_cat_names_coro(const struct ctp_cat_names *n, uint32_t pid, uint64_t coro,
			       char *buf, size_t size);

/* The innermost frame of the stack as "symbol+0xoff" (or its place in its module,
 * ctp_frame_place, when it has no symbol), NULL when the stack was not seen. */
const char *ctp_cat_names_stack_top(const struct ctp_cat_names *n, uint32_t pid, uint32_t stack);

#endif

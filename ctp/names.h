/* The words the trace uses for the contract's enums (docs/trace-format.md): one table per enum,
 * shared by the writer (ctp/emit.c) and the reader (ctp-cat), so that a name is spelled
 * in one place. Each table is indexed by the enum's value; values without a name are NULL. */
#ifndef CTP_NAMES_H
#define CTP_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct ctp_name_table {
	const char *const *names;
	uint32_t count;
};

/* How a coroutine ended: the `how` of a `coro_end` line (trace format version 2). */
enum ctp_end_how {
	CTP_END_UNKNOWN = 0,   /* the record saying how was lost; the station says it ended */
	CTP_END_RETURNED = 1,  /* its makecontext entry function returned */
	CTP_END_LEFT = 2,      /* it left by setcontext without saving itself; nothing came back */
	CTP_END_ENDED = 3,     /* Boost.Context's last switch away from it (ontop/jump_fcontext) */
	CTP_END_ABANDONED = 4, /* a new coroutine took over its stack */
	CTP_END_THREAD_EXIT = 5, /* its thread exited: a thread's own, or the one running on it */
};

extern const struct ctp_name_table ctp_kind_names;	 /* enum ctp_coro_kind: "thread", ... */
extern const struct ctp_name_table ctp_state_names;	 /* enum ctp_coro_state: "created", ... */
extern const struct ctp_name_table ctp_switch_how_names; /* enum ctp_switch_how */
extern const struct ctp_name_table ctp_op_names;	 /* enum ctp_wait_op: "read", ... */
extern const struct ctp_name_table ctp_fd_event_names;	 /* enum ctp_fd_event */
extern const struct ctp_name_table ctp_end_how_names;	 /* enum ctp_end_how */

/* The name of `value`, NULL when it has none. */
const char *ctp_name_of(const struct ctp_name_table *t, uint32_t value);

/* The value named `name` (`len` bytes), or `missing` when no value has that name. */
uint32_t ctp_name_find(const struct ctp_name_table *t, const char *name, size_t len,
		       uint32_t missing);

#endif

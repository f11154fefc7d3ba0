/* One look at every coroutine of a process, running or in a core file (pstack/source.h): its
 * stations read under their seqlocks,
 * their suspend stacks interned (so that coroutines stopped at the same place share one stack),
 * and the clock needed to say how long ago each last switched. */
#ifndef CTP_PSTACK_SNAPSHOT_H
#define CTP_PSTACK_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/stack_table.h"
#include "pstack/source.h"

struct pstack_coro {
	uint64_t coro;
	uint64_t entry;	      /* 0 when unknown (a thread's own stack) */
	uint64_t since_raw;   /* last switch (or creation), in the segment's clock */
	uint64_t created_raw; /* creation, in the segment's clock */
	uint64_t switches;
	uint32_t state; /* enum ctp_coro_state, never free or exited */
	uint32_t kind;	/* enum ctp_coro_kind */
	uint32_t tid;
	int32_t wait_fd;  /* -1 unless a wait is current */
	uint32_t wait_op; /* enum ctp_wait_op when wait_fd >= 0 */
	bool wait_closed; /* the fd was closed while it waited */
	bool torn;	  /* never read consistently: the fields may mix two updates */
	uint32_t stack;	  /* id in the snapshot's stack table, 0 = no stack */
};

struct pstack_stack_ref {
	size_t frames_at; /* in stacks.arena */
	uint32_t n;
	bool reaches_start; /* ctp_view_frames_as_untraced */
};

struct pstack_snapshot {
	uint32_t pid;
	uint32_t stack_depth;	   /* frames the process records per stack; 0 = stacks off */
	struct pstack_coro *coros; /* in coroutine id order */
	size_t ncoros, cap;
	struct ctp_stack_table stacks;
	struct pstack_stack_ref *stack_refs; /* [id - 1] */
	size_t nstack_refs;
	size_t ended;		/* stations of ended coroutines not recycled yet */
	size_t torn;		/* coroutines whose station never read consistently */
	uint64_t stations_lost; /* coroutines the process could not give a station */
	/* The clock: raw readings convert to "ago" by (now_raw - raw) * ns_per_tick. */
	uint64_t now_raw;
	uint64_t now_mono_ns;	   /* CLOCK_MONOTONIC when the stations had been read */
	uint64_t start_mono_ns;	   /* CLOCK_MONOTONIC when the segment was made */
	double ns_per_tick;	   /* 0 when the rate could not be had */
	bool now_at_latest_switch; /* a core whose moment is unknown: "now" is its latest switch */
	uint64_t read_ns;	   /* how long reading the stations took */
};

/* Reads every station of `src` into `snap`. */
void pstack_snapshot_take(struct pstack_source *src, struct pstack_snapshot *snap);
void pstack_snapshot_free(struct pstack_snapshot *snap);

/* The frames of stack `id` (>= 1). */
const uint64_t *pstack_stack_frames(const struct pstack_snapshot *snap, uint32_t id, uint32_t *n,
				    bool *reaches_start);

/* How long before the snapshot `raw` was, in nanoseconds (0 if it is not before). */
uint64_t pstack_ago_ns(const struct pstack_snapshot *snap, uint64_t raw);

/* The CLOCK_MONOTONIC time of `raw`. */
uint64_t pstack_mono_ns(const struct pstack_snapshot *snap, uint64_t raw);

#endif

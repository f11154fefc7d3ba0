/* Coroutines grouped by where they are: the same state, the same suspend stack, and the same
 * kind of wait (the operation, and whether its fd was closed meanwhile). A hung server's story
 * is usually one big group ("47 x sched_wait_readable <- conn_read_line", all waiting on fds
 * closed under them), so the views show groups, largest first, and the coroutines of each
 * below it. Coroutines parked at the same place on live fds form a group of their own. */
#ifndef CTP_PSTACK_GROUPS_H
#define CTP_PSTACK_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pstack/snapshot.h"

struct pstack_group {
	uint32_t state;
	uint32_t stack;	  /* 0 = none */
	uint32_t wait_op; /* CTP_OP_NONE when its coroutines wait on no known fd */
	bool wait_closed;
	size_t first; /* into pstack_groups.members */
	size_t count;
};

struct pstack_groups {
	struct pstack_group *groups; /* largest first; ties by lowest coroutine id */
	size_t ngroups;
	size_t *members; /* indices into snap->coros, each group's in id order */
};

void pstack_groups_make(const struct pstack_snapshot *snap, struct pstack_groups *out);
void pstack_groups_free(struct pstack_groups *g);

#endif

#include "pstack/groups.h"

#include <stdlib.h>
#include <string.h>

#include "ctp/xalloc.h"

/* qsort has no context argument: the coroutines being sorted. Set only inside make. */
static const struct pstack_coro *sorting;

/* The kind of wait, as one number: no wait, then each operation on a live fd, then on a closed
 * one. */
static uint32_t wait_key(const struct pstack_coro *c)
{
	if (c->wait_fd < 0)
		return 0;
	return c->wait_op * 2 + c->wait_closed;
}

static int by_place(const void *a, const void *b)
{
	const struct pstack_coro *x = &sorting[*(const size_t *)a];
	const struct pstack_coro *y = &sorting[*(const size_t *)b];
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (wait_key(x) != wait_key(y))
		return wait_key(x) < wait_key(y) ? -1 : 1;
	return (x->coro > y->coro) - (x->coro < y->coro);
}

static const struct pstack_groups *grouping;

static int by_size(const void *a, const void *b)
{
	const struct pstack_group *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	uint64_t ix = sorting[grouping->members[x->first]].coro;
	uint64_t iy = sorting[grouping->members[y->first]].coro;
	return (ix > iy) - (ix < iy);
}

void pstack_groups_make(const struct pstack_snapshot *snap, struct pstack_groups *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = snap->ncoros;
	if (n == 0)
		return;
	out->members = ctp_xcalloc(n, sizeof(*out->members));
	for (size_t i = 0; i < n; i++)
		out->members[i] = i;
	sorting = snap->coros;
	qsort(out->members, n, sizeof(*out->members), by_place);
	size_t cap = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pstack_coro *c = &snap->coros[out->members[i]];
		struct pstack_group *g = out->ngroups ? &out->groups[out->ngroups - 1] : NULL;
		if (g && g->state == c->state && g->stack == c->stack &&
		    g->wait_op == (c->wait_fd >= 0 ? c->wait_op : 0) &&
		    g->wait_closed == (c->wait_fd >= 0 && c->wait_closed)) {
			g->count++;
			continue;
		}
		if (out->ngroups == cap) {
			cap = cap ? cap * 2 : 64;
			out->groups = ctp_xrealloc(out->groups, cap * sizeof(*out->groups));
		}
		out->groups[out->ngroups++] = (struct pstack_group){
			.state = c->state,
			.stack = c->stack,
			.wait_op = c->wait_fd >= 0 ? c->wait_op : 0,
			.wait_closed = c->wait_fd >= 0 && c->wait_closed,
			.first = i,
			.count = 1,
		};
	}
	grouping = out;
	qsort(out->groups, out->ngroups, sizeof(*out->groups), by_size);
	sorting = NULL;
	grouping = NULL;
}

void pstack_groups_free(struct pstack_groups *g)
{
	free(g->groups);
	free(g->members);
	memset(g, 0, sizeof(*g));
}

/* Which coroutine a stack pointer belongs to. A context to be resumed is known by where its
 * stack pointer lies (a saved ucontext's RSP, an fcontext value): that stays true however the
 * application copies or reuses its context structures. Coroutine stacks are registered page by
 * page in a three-level table (like a page table: 12 bits a level over 36-bit page numbers);
 * each page keeps two candidates, because two small stacks can share a page. A lookup is three
 * dependent loads and a range check; nodes are allocated only when a stack is registered. */
#include <sys/mman.h>

#include "ctp/atomics.h"
#include "preload.h"

enum { LEVEL_BITS = 12, LEVEL_SIZE = 1 << LEVEL_BITS, PAGE_SHIFT = 12 };

struct leaf {
	uint32_t slot[LEVEL_SIZE][2]; /* station index + 1, 0 = none */
};

struct mid {
	struct leaf *leaf[LEVEL_SIZE];
};

static struct mid *top[LEVEL_SIZE];
/* Counts registrations: a page found to hold no coroutine stack may hold one after the next. */
uint64_t ctp_stackmap_generation;
#define generation ctp_stackmap_generation

static void *new_node(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Publishes a freshly allocated node in *slot unless another thread did first. */
static void *install(void **slot, size_t size)
{
	void *node = new_node(size);
	if (!node)
		return NULL;
	void *expected = NULL;
	if (__atomic_compare_exchange_n(slot, &expected, node, false, __ATOMIC_RELEASE,
					__ATOMIC_ACQUIRE))
		return node;
	munmap(node, size);
	return expected;
}

static struct leaf *leaf_for(uint64_t page, bool create)
{
	uint64_t i1 = (page >> (2 * LEVEL_BITS)) & (LEVEL_SIZE - 1);
	uint64_t i2 = (page >> LEVEL_BITS) & (LEVEL_SIZE - 1);
	if (page >> (3 * LEVEL_BITS))
		return NULL; /* beyond 48-bit addresses */
	struct mid *m = CTP_LOAD_ACQUIRE(&top[i1]);
	if (!m && (!create || !(m = install((void **)&top[i1], sizeof(struct mid)))))
		return NULL;
	struct leaf *l = CTP_LOAD_ACQUIRE(&m->leaf[i2]);
	if (!l && (!create || !(l = install((void **)&m->leaf[i2], sizeof(struct leaf)))))
		return NULL;
	return l;
}

/* A candidate that no longer covers any byte of the page can be replaced. */
static bool stale(uint32_t v, uint64_t page)
{
	return v == 0 ||
	       !ctp_station_live_over(v - 1, page << PAGE_SHIFT, (page + 1) << PAGE_SHIFT);
}

void ctp_stackmap_add(uint32_t idx, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	for (uint64_t page = lo >> PAGE_SHIFT; page <= (hi - 1) >> PAGE_SHIFT; page++) {
		struct leaf *l = leaf_for(page, true);
		if (!l)
			return;
		uint32_t *slot = l->slot[page & (LEVEL_SIZE - 1)];
		int k = stale(CTP_LOAD_RELAXED(&slot[0]), page) ? 0 : 1;
		CTP_STORE_RELEASE(&slot[k], idx + 1);
	}
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
}

void ctp_stackmap_remove(uint32_t idx, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	for (uint64_t page = lo >> PAGE_SHIFT; page <= (hi - 1) >> PAGE_SHIFT; page++) {
		struct leaf *l = leaf_for(page, false);
		if (!l)
			continue;
		uint32_t *slot = l->slot[page & (LEVEL_SIZE - 1)];
		for (int k = 0; k < 2; k++) {
			uint32_t expected = idx + 1;
			__atomic_compare_exchange_n(&slot[k], &expected, 0, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		}
	}
}

void ctp_stackmap_retire_overlapping(struct ctp_thread *t, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	for (uint64_t page = lo >> PAGE_SHIFT; page <= (hi - 1) >> PAGE_SHIFT; page++) {
		struct leaf *l = leaf_for(page, false);
		if (!l)
			continue;
		for (int k = 0; k < 2; k++) {
			uint32_t v = CTP_LOAD_ACQUIRE(&l->slot[page & (LEVEL_SIZE - 1)][k]);
			/* Ended already (found on an earlier page), or its stack does not reach
			 * into the new one: only live overlaps are retired. */
			if (v == 0 || v - 1 == t->current || !ctp_station_live_over(v - 1, lo, hi))
				continue;
			ctp_coro_abandon(t, v - 1);
		}
	}
}

uint32_t ctp_stackmap_find(uint64_t sp)
{
	struct leaf *l = leaf_for(sp >> PAGE_SHIFT, false);
	if (!l)
		return CTP_NO_STATION;
	uint32_t *slot = l->slot[(sp >> PAGE_SHIFT) & (LEVEL_SIZE - 1)];
	for (int k = 0; k < 2; k++) {
		uint32_t v = CTP_LOAD_ACQUIRE(&slot[k]);
		if (v && ctp_station_holds(v - 1, sp))
			return v - 1;
	}
	return CTP_NO_STATION;
}

struct thread_search {
	uint64_t sp;
	uint32_t found;
};

static void match_thread_stack(uint32_t idx, struct ctp_station *s, void *arg)
{
	struct thread_search *q = arg;
	if (q->found == CTP_NO_STATION && CTP_LOAD_RELAXED(&s->kind) == CTP_KIND_THREAD &&
	    ctp_station_holds(idx, q->sp))
		q->found = idx;
}

uint32_t ctp_station_for_sp_slow(struct ctp_thread *t, uint64_t sp)
{
	uint64_t page = sp >> PAGE_SHIFT;
	uint64_t gen = CTP_LOAD_ACQUIRE(&generation);
	uint32_t idx = ctp_stackmap_find(sp);
	if (idx != CTP_NO_STATION) {
		uint32_t k = t->lookup_next++ & 1;
		t->lookup_page[k] = page;
		t->lookup_idx[k] = idx;
		return idx;
	}
	if (t->stack_lo <= sp && sp < t->stack_hi) {
		t->own_page = page;
		t->own_gen = gen;
		return t->self;
	}
	/* Another thread's own stack (rare: M:N programs resume coroutines, not threads' own
	 * contexts, on other threads). An unknown stack counts as this thread's own. */
	struct thread_search q = {.sp = sp, .found = CTP_NO_STATION};
	ctp_stations_each(match_thread_stack, &q);
	return q.found != CTP_NO_STATION ? q.found : t->self;
}

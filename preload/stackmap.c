/* Which coroutine a stack pointer belongs to. A context to be resumed is known by where its
 * stack pointer lies (a saved ucontext's RSP, an fcontext value): that stays true however the
 * application copies or reuses its context structures. Coroutine stacks are registered unit by
 * unit in a three-level table (like a page table: 12 bits a level over 36-bit unit numbers);
 * each unit keeps two candidates, and nodes are allocated only when a stack is registered. A
 * lookup is three dependent loads and a range check.
 *
 * Two such tables: one of 4 KiB pages for stacks under 64 KiB, where two small stacks can share
 * a page, and one of 64 KiB chunks for the rest. A chunk can meet at most two stacks of 64 KiB
 * or more that do not overlap (a third between them would have to fit inside it), so two
 * candidates still hold every live one. pdns-recursor makes, ends and retires a 200 KiB stack
 * per query: 4-5 chunks each time instead of 50 pages. */
#include <sys/mman.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/events.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"

enum { LEVEL_BITS = 12, LEVEL_SIZE = 1 << LEVEL_BITS, PAGE_SHIFT = 12, CHUNK_SHIFT = 16 };

struct leaf {
	uint32_t slot[LEVEL_SIZE][2]; /* station index + 1, 0 = none */
};

struct mid {
	struct leaf *leaf[LEVEL_SIZE];
};

/* One table: its unit is 1 << shift bytes. */
struct unit_map {
	struct mid *top[LEVEL_SIZE];
	unsigned shift;
};

static struct unit_map pages = {.shift = PAGE_SHIFT};
static struct unit_map chunks = {.shift = CHUNK_SHIFT};

/* The table a stack of [lo, hi) is registered in: a pure function of its range, so that its
 * removal finds it where it was added. */
static struct unit_map *map_for(uint64_t lo, uint64_t hi)
{
	return hi - lo >= (1ull << CHUNK_SHIFT) ? &chunks : &pages;
}

/* Counts registrations: a page found to hold no coroutine stack may hold one after the next. */
uint64_t ctp_stackmap_generation;
#define generation ctp_stackmap_generation

static void *new_node(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Publishes a freshly allocated node in *slot unless another thread did first. */
static __attribute__((noinline)) void *install(void **slot, size_t size)
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

CTP_ALWAYS_INLINE struct leaf *leaf_for(struct unit_map *map, uint64_t unit, bool create)
{
	uint64_t i1 = (unit >> (2 * LEVEL_BITS)) & (LEVEL_SIZE - 1);
	uint64_t i2 = (unit >> LEVEL_BITS) & (LEVEL_SIZE - 1);
	if (unit >> (3 * LEVEL_BITS))
		return NULL; /* beyond 48-bit addresses */
	struct mid *m = CTP_LOAD_ACQUIRE(&map->top[i1]);
	if (!m && (!create || !(m = install((void **)&map->top[i1], sizeof(struct mid)))))
		return NULL;
	struct leaf *l = CTP_LOAD_ACQUIRE(&m->leaf[i2]);
	if (!l && (!create || !(l = install((void **)&m->leaf[i2], sizeof(struct leaf)))))
		return NULL;
	return l;
}

/* The two candidates of the unit that holds addr, or NULL when no stack was ever registered
 * near it. */
CTP_ALWAYS_INLINE uint32_t *slots_at(struct unit_map *map, uint64_t addr)
{
	uint64_t unit = addr >> map->shift;
	struct leaf *l = leaf_for(map, unit, false);
	return l ? l->slot[unit & (LEVEL_SIZE - 1)] : NULL;
}

/* The live coroutine among a unit's candidates whose stack overlaps [lo, hi), or
 * CTP_NO_STATION. */
CTP_ALWAYS_INLINE uint32_t candidate_over(const uint32_t *slot, uint64_t lo, uint64_t hi)
{
	for (int k = 0; slot && k < 2; k++) {
		uint32_t v = CTP_LOAD_ACQUIRE(&slot[k]);
		if (v && ctp_station_live_over(v - 1, lo, hi))
			return v - 1;
	}
	return CTP_NO_STATION;
}

/* The units of [lo, hi) that one leaf covers: slots [first, last] of `leaf`. A stack spans tens
 * of pages, and each is made, ended and unmapped once per query in a server that makes a
 * coroutine per request: the leaf is found once per span, not once per unit. */
struct leaf_span {
	struct leaf *leaf;  /* NULL: no stack was ever registered in this span */
	uint64_t leaf_unit; /* the unit of the leaf's slot 0 */
	uint32_t first, last;
};

/* The next span of units from *unit up to last_unit, advancing *unit past it; false when none
 * is left (none lies beyond 48-bit addresses, whatever range a munmap names), or (with create)
 * when a node could not be allocated. */
CTP_ALWAYS_INLINE bool next_span(struct unit_map *map, uint64_t *unit, uint64_t last_unit,
				 bool create, struct leaf_span *span)
{
	if (*unit > last_unit || *unit >> (3 * LEVEL_BITS))
		return false;
	uint64_t span_end = *unit | (LEVEL_SIZE - 1);
	if (span_end > last_unit)
		span_end = last_unit;
	span->leaf = leaf_for(map, *unit, create);
	if (!span->leaf && create)
		return false;
	span->leaf_unit = *unit & ~(uint64_t)(LEVEL_SIZE - 1);
	span->first = (uint32_t)(*unit & (LEVEL_SIZE - 1));
	span->last = (uint32_t)(span_end & (LEVEL_SIZE - 1));
	*unit = span_end + 1;
	return true;
}

void ctp_stackmap_remove(uint32_t idx, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	struct unit_map *map = map_for(lo, hi);
	uint64_t unit = lo >> map->shift;
	struct leaf_span span;
	while (next_span(map, &unit, (hi - 1) >> map->shift, false, &span)) {
		if (!span.leaf)
			continue;
		for (uint32_t i = span.first; i <= span.last; i++) {
			uint32_t *slot = span.leaf->slot[i];
			for (int k = 0; k < 2; k++) {
				/* A locked instruction only where the slot is ours. */
				uint32_t expected = idx + 1;
				if (CTP_LOAD_RELAXED(&slot[k]) == expected)
					__atomic_compare_exchange_n(&slot[k], &expected, 0, false,
								    __ATOMIC_RELAXED,
								    __ATOMIC_RELAXED);
			}
		}
	}
}

/* Abandons every live coroutine registered in `map` whose stack overlaps [lo, hi). */
CTP_ALWAYS_INLINE void retire_in(struct unit_map *map, struct ctp_thread *t, uint64_t lo,
				 uint64_t hi)
{
	uint64_t unit = lo >> map->shift;
	struct leaf_span span;
	/* A span without a leaf has no stack in its 4096 units: a large munmap skips it whole. */
	while (next_span(map, &unit, (hi - 1) >> map->shift, false, &span)) {
		if (!span.leaf)
			continue;
		for (uint32_t i = span.first; i <= span.last; i++) {
			for (int k = 0; k < 2; k++) {
				uint32_t v = CTP_LOAD_ACQUIRE(&span.leaf->slot[i][k]);
				/* Ended already (found on an earlier unit), or its stack does not
				 * reach into the new one: only live overlaps are retired. */
				if (v == 0 || v - 1 == t->current ||
				    !ctp_station_live_over(v - 1, lo, hi))
					continue;
				ctp_coro_abandon(t, v - 1);
			}
		}
	}
}

void ctp_stackmap_retire_overlapping(struct ctp_thread *t, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	retire_in(&pages, t, lo, hi);
	retire_in(&chunks, t, lo, hi);
}

/* Claims of a stack's first and last units, which another live stack may share (one stack ends
 * in the page where the next begins: malloc's blocks side by side). Threads make coroutines at
 * once, and such a unit may be claimed by two of them together, each before its station is live
 * (ctp_coro_begin follows the claim): a place another claim took is never written over unseen,
 * so it is taken with a compare-and-swap, an empty one first. A place lost so left a thread's
 * first coroutine unfound, and each of its switches unrecorded
 * (transparency/threads_grow_together). This is the retry, once a compare-and-swap found its
 * place changed: only where both places are taken is one given up, one whose station no longer
 * covers the unit (an ended coroutine's, a station since reused), else, with more small stacks
 * in one unit than places, the second. */
static __attribute__((noinline)) void take_shared_place(uint32_t *slot, uint32_t idx,
							uint64_t unit_lo, uint64_t unit_hi)
{
	for (;;) {
		uint32_t v0 = CTP_LOAD_ACQUIRE(&slot[0]), v1 = CTP_LOAD_ACQUIRE(&slot[1]);
		if (v0 == idx + 1 || v1 == idx + 1)
			return;
		int place = 1;
		if (v0 == 0 || (v1 != 0 && !ctp_station_live_over(v0 - 1, unit_lo, unit_hi)))
			place = 0;
		uint32_t expected = place ? v1 : v0;
		if (__atomic_compare_exchange_n(&slot[place], &expected, idx + 1, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
}

void ctp_stackmap_claim(struct ctp_thread *t, uint32_t idx, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	struct unit_map *map = map_for(lo, hi);
	retire_in(map == &pages ? &chunks : &pages, t, lo, hi);
	uint64_t unit = lo >> map->shift, first_unit = unit, last_unit = (hi - 1) >> map->shift;
	struct leaf_span span;
	while (next_span(map, &unit, last_unit, true, &span)) {
		for (uint32_t i = span.first; i <= span.last; i++) {
			uint32_t *slot = span.leaf->slot[i];
			uint64_t this_unit = span.leaf_unit | i, unit_lo = this_unit << map->shift;
			uint32_t v0 = CTP_LOAD_ACQUIRE(&slot[0]), v1 = CTP_LOAD_ACQUIRE(&slot[1]);
			bool sharer = false; /* in place 0, a live stack beside this one */
			/* A live stack over the new one is retired (its end clears its place); one
			 * that only shares the unit keeps its place. */
			if (v0 != 0 && v0 - 1 != idx) {
				if (v0 - 1 != t->current && ctp_station_live_over(v0 - 1, lo, hi))
					ctp_coro_abandon(t, v0 - 1);
				else
					sharer = ctp_station_live_over(
						v0 - 1, unit_lo, unit_lo + (1ull << map->shift));
			}
			if (v1 != 0 && v1 - 1 != idx && v1 - 1 != t->current &&
			    ctp_station_live_over(v1 - 1, lo, hi))
				ctp_coro_abandon(t, v1 - 1);
			if (v0 == idx + 1 || v1 == idx + 1)
				continue;
			/* An empty place first: a place taken by a claim whose station is not
			 * live yet looks like a dead one. */
			int place = v0 == 0 ? 0 : v1 == 0 || sharer ? 1 : 0;
			uint32_t expected = place ? v1 : v0;
			/* A unit inside the stack is no other live stack's: no other claim meets
			 * this one there, so a plain store will do (a locked instruction costs
			 * some 20 cycles). */
			if (this_unit != first_unit && this_unit != last_unit)
				CTP_STORE_RELEASE(&slot[place], idx + 1);
			else if (!__atomic_compare_exchange_n(&slot[place], &expected, idx + 1,
							      false, __ATOMIC_RELEASE,
							      __ATOMIC_RELAXED))
				take_shared_place(slot, idx, unit_lo,
						  unit_lo + (1ull << map->shift));
		}
	}
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
}

uint32_t ctp_stackmap_find(uint64_t sp)
{
	uint32_t idx = candidate_over(slots_at(&pages, sp), sp, sp + 1);
	return idx != CTP_NO_STATION ? idx : candidate_over(slots_at(&chunks, sp), sp, sp + 1);
}

/* Threads' own stacks, for the rare switch to another thread's own context (M:N programs resume
 * coroutines, not threads, on other threads; a program may hand a thread's context over). A
 * slot holds a thread station's index + 1, 0 = free; the station itself says which stack it
 * covers and whether it lives, so a slot read while it changes answers nothing wrong. */
enum { MAX_THREAD_STACKS = CTP_MAX_THREAD_SLOTS };
static uint32_t thread_slots[MAX_THREAD_STACKS];
static uint32_t thread_slots_used; /* high-water mark */
/* Each slot's stack, compared first: a coroutine's making asks whether its stack lies on any
 * thread's (ctp_note_stack_on_other_thread), and the station's own checks took a lookup in the
 * station directory for every slot (pdns-recursor, whose eight threads' slots were looked at
 * for each query's coroutine: 104 instructions a query). Written once the slot is taken and
 * cleared after it is given back: a range seen without its slot, or the reverse, answers
 * nothing (the station is still checked). */
static struct {
	uint64_t lo, hi;
} thread_ranges[MAX_THREAD_STACKS];

uint32_t ctp_thread_stacks_add(uint32_t idx)
{
	for (uint32_t i = 0; i < MAX_THREAD_STACKS; i++) {
		uint32_t expected = 0;
		if (__atomic_compare_exchange_n(&thread_slots[i], &expected, idx + 1, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			const struct ctp_station *s = ctp_station_at(idx);
			__atomic_store_n(&thread_ranges[i].lo, CTP_LOAD_RELAXED(&s->stack_lo),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&thread_ranges[i].hi, CTP_LOAD_RELAXED(&s->stack_hi),
					 __ATOMIC_RELAXED);
			uint32_t used = __atomic_load_n(&thread_slots_used, __ATOMIC_RELAXED);
			while (used <= i &&
			       !__atomic_compare_exchange_n(&thread_slots_used, &used, i + 1, true,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			/* A page that was nobody's may be this thread's stack now. */
			__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
			return i;
		}
	}
	return CTP_MAX_THREAD_SLOTS;
}

void ctp_thread_stacks_remove(uint32_t idx)
{
	uint32_t used = __atomic_load_n(&thread_slots_used, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < used; i++) {
		uint32_t expected = idx + 1;
		if (__atomic_compare_exchange_n(&thread_slots[i], &expected, 0, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_store_n(&thread_ranges[i].lo, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&thread_ranges[i].hi, 0, __ATOMIC_RELAXED);
			return;
		}
	}
}

/* The live thread whose own stack overlaps [lo, hi), or CTP_NO_STATION. */
static uint32_t thread_stack_over(uint64_t lo, uint64_t hi)
{
	uint32_t used = __atomic_load_n(&thread_slots_used, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < used; i++) {
		if (__atomic_load_n(&thread_ranges[i].lo, __ATOMIC_RELAXED) >= hi ||
		    lo >= __atomic_load_n(&thread_ranges[i].hi, __ATOMIC_RELAXED))
			continue;
		uint32_t v = __atomic_load_n(&thread_slots[i], __ATOMIC_ACQUIRE);
		if (v && CTP_LOAD_RELAXED(&ctp_station_at(v - 1)->kind) == CTP_KIND_THREAD &&
		    ctp_station_live_over(v - 1, lo, hi))
			return v - 1;
	}
	return CTP_NO_STATION;
}

uint8_t ctp_coros_on_other_threads_stacks;

/* Past this many thread slots, a search at every coroutine's making would cost more than the
 * scans at thread exits it saves. */
enum { THREAD_STACKS_SEARCHED = 256 };

void ctp_note_stack_on_other_thread(uint64_t lo, uint64_t hi)
{
	if (__atomic_load_n(&ctp_coros_on_other_threads_stacks, __ATOMIC_RELAXED))
		return;
	if (__atomic_load_n(&thread_slots_used, __ATOMIC_RELAXED) > THREAD_STACKS_SEARCHED ||
	    thread_stack_over(lo, hi) != CTP_NO_STATION)
		__atomic_store_n(&ctp_coros_on_other_threads_stacks, 1, __ATOMIC_RELAXED);
}

/* Whether a live coroutine's stack covers any byte of the page. */
static bool page_holds_coroutine_stack(uint64_t page)
{
	uint64_t lo = page << PAGE_SHIFT, hi = lo + (1ull << PAGE_SHIFT);
	return candidate_over(slots_at(&pages, lo), lo, hi) != CTP_NO_STATION ||
	       candidate_over(slots_at(&chunks, lo), lo, hi) != CTP_NO_STATION;
}

/* No page is UINT64_MAX. */
const struct ctp_lookup_hint ctp_no_lookup_hints[CTP_LOOKUP_SETS][2] = {
	[0 ... CTP_LOOKUP_SETS - 1] = {{.page = UINT64_MAX}, {.page = UINT64_MAX}},
};

static void remember(struct ctp_thread *t, uint64_t page, uint32_t idx)
{
	if (t->lookup == ctp_no_lookup_hints)
		return; /* no walk area yet: the next switch maps it */
	struct ctp_lookup_hint *set = ctp_lookup_set(t, page);
	if (set[0].page != page || set[0].idx != idx) /* two small stacks may share a page */
		set[1] = set[0];
	set[0] = (struct ctp_lookup_hint){.page = page, .station = ctp_station_at(idx), .idx = idx};
}

void ctp_stackmap_hint(struct ctp_thread *t, uint64_t sp, uint32_t idx)
{
	remember(t, sp >> PAGE_SHIFT, idx);
}

uint32_t ctp_station_for_sp_slow(struct ctp_thread *t, uint64_t sp)
{
	uint64_t page = sp >> PAGE_SHIFT;
	uint64_t gen = CTP_LOAD_ACQUIRE(&generation);
	if (t->stack_lo <= sp && sp < t->stack_hi && !ctp_thread_stack_may_hold_coroutines(t)) {
		/* Back to the thread's own stack after a coroutine was made (which turned the page
		 * cached below stale): nothing to look up. */
		t->own_page = page;
		t->own_gen = gen;
		return t->self;
	}
	uint32_t idx = ctp_stackmap_find(sp);
	if (idx == CTP_NO_STATION && !(t->stack_lo <= sp && sp < t->stack_hi))
		idx = thread_stack_over(sp, sp + 1);
	if (idx != CTP_NO_STATION && idx != t->self) {
		remember(t, page, idx);
		return idx;
	}
	/* This thread's own stack, or a stack nobody registered (a context the program made by
	 * hand, a signal stack): both count as the thread's own. Cached until a stack is
	 * registered, so that such switches never search again; but not when a coroutine's stack
	 * shares the page (a buffer on the thread's own stack, just above its frames): the page
	 * answers for the whole of it, and that coroutine's stack pointer would then be taken for
	 * the thread's and its switches lost. */
	if (!page_holds_coroutine_stack(page)) {
		t->own_page = page;
		t->own_gen = gen;
	}
	return t->self;
}

/* A coroutine whose stack is given back has ended: it can never run again. Runtimes end their
 * coroutines in ways no switch shows: GNU Pth frees a finished thread's stack at pth_join,
 * libpcl in its delete helper, Boost.Coroutine (Asio's spawn) in the owner after the function
 * returned. Each frees the very block it handed to makecontext or make_fcontext. So free() and
 * munmap() are hooked: a coroutine, not running, whose stack starts at the freed pointer (or lies
 * in the unmapped range) is ended there, its station recycled.
 *
 * The block freed holds the stack, and may begin a little before it (at most HEADER_MAX): libpcl
 * puts its coroutine record first, then the stack. free() is among the hottest calls of a
 * program (pdns-recursor makes 62 a query): the hook costs one load and a compare against a
 * small table of the stack bases coroutines were made with, keyed by page, and jumps to the real
 * free without a frame of its own: 16 instructions. A base in the first HEADER_MAX bytes of its
 * page is noted under the page before too, where a block that holds it may begin; the table is
 * direct-mapped: a base pushed out by a collision is simply not seen freed, and its coroutine
 * ends when its stack is reused. A candidate is checked further against the block's size. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>

#include "ctp/atomics.h"
#include "ctp/station.h"
#include "preload/compiler.h"
#include "preload/events.h"
#include "preload/real.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"

enum { BASE_SLOTS = 4096 };
static uint64_t stack_bases[BASE_SLOTS];

enum { PAGE_SHIFT = 12, PAGE_SIZE = 1 << PAGE_SHIFT, HEADER_MAX = 2048 };

static inline uint32_t base_slot(uint64_t p)
{
	uint64_t page = p >> PAGE_SHIFT;
	return (uint32_t)(page ^ (page >> 12)) & (BASE_SLOTS - 1);
}

/* A stack base noted in the table that may lie at the start of a block that begins at p, or 0. */
static inline uint64_t candidate_base(uint64_t p)
{
	uint64_t base = __atomic_load_n(&stack_bases[base_slot(p)], __ATOMIC_RELAXED);
	return base - p < HEADER_MAX ? base : 0; /* base >= p, and close; never 0 for p != 0 */
}

/* Whether base is also noted under the page before its own: a block that holds it may begin
 * there. */
static inline bool noted_twice(uint64_t base)
{
	return (base & (PAGE_SIZE - 1)) < HEADER_MAX;
}

static size_t (*real_usable_size)(void *);

void ctp_stack_base_note(uint64_t lo)
{
	/* Looked up here, when a coroutine is made, never inside free: dlsym may free. */
	if (CTP_UNLIKELY(!__atomic_load_n(&real_usable_size, __ATOMIC_RELAXED))) {
		int saved_errno = errno;
		__atomic_store_n(&real_usable_size,
				 (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size"),
				 __ATOMIC_RELAXED);
		errno = saved_errno;
	}
	__atomic_store_n(&stack_bases[base_slot(lo)], lo, __ATOMIC_RELAXED);
	if (noted_twice(lo))
		__atomic_store_n(&stack_bases[base_slot(lo - PAGE_SIZE)], lo, __ATOMIC_RELAXED);
}

static void forget_base(uint64_t base)
{
	uint64_t expected = base;
	__atomic_compare_exchange_n(&stack_bases[base_slot(base)], &expected, 0, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	expected = base; /* the first exchange may have overwritten it */
	if (noted_twice(base))
		__atomic_compare_exchange_n(&stack_bases[base_slot(base - PAGE_SIZE)], &expected, 0,
					    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* The block at p, being freed, may hold the stack that begins at base: if the block reaches
 * that far, the coroutine there, if it lives and does not run, ends. Only on a thread that
 * traces already (nothing is started from inside free). */
static __attribute__((noinline)) void block_freed(uint64_t p, uint64_t base)
{
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING || ctp_in_vfork_child())
		return;
	int saved_errno = errno;
	size_t (*usable)(void *) = __atomic_load_n(&real_usable_size, __ATOMIC_RELAXED);
	if (base != p && (!usable || base >= p + usable((void *)p)))
		goto out; /* the stack is not in this block: a block just before it */
	forget_base(base);
	uint32_t idx = ctp_stackmap_find(base);
	if (idx != CTP_NO_STATION && idx != t->current) {
		struct ctp_station *s = ctp_station_at(idx);
		uint32_t state = CTP_LOAD_RELAXED(&s->state);
		if (CTP_LOAD_RELAXED(&s->stack_lo) == base && state != CTP_STATE_RUNNING &&
		    CTP_LOAD_RELAXED(&s->kind) != CTP_KIND_THREAD)
			ctp_coro_abandon(t, idx);
	}
out:
	errno = saved_errno;
}

static void (*real_free_fn)(void *);

/* dlsym may itself free: while the lookup runs, a free of this thread leaks instead. */
static __attribute__((noinline)) void (*resolve_free(void))(void *)
{
	static __thread int resolving;
	if (resolving)
		return NULL;
	resolving = 1;
	int saved_errno = errno;
	void (*f)(void *) = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	errno = saved_errno;
	resolving = 0;
	if (f)
		__atomic_store_n(&real_free_fn, f, __ATOMIC_RELAXED);
	return f;
}

/* A block that may hold a coroutine's stack, or the first free (the real one not yet known). */
static __attribute__((noinline)) void free_slow(void *p)
{
	uint64_t base = candidate_base((uint64_t)p);
	if (base != 0)
		block_freed((uint64_t)p, base);
	void (*f)(void *) = __atomic_load_n(&real_free_fn, __ATOMIC_RELAXED);
	if (!f && !(f = resolve_free()))
		return;
	f(p);
}

/* Both calls are tail calls: the common path sets up no frame. */
CTP_EXPORT void free(void *p)
{
	void (*f)(void *) = __atomic_load_n(&real_free_fn, __ATOMIC_RELAXED);
	if (CTP_UNLIKELY(candidate_base((uint64_t)p) != 0 || !f)) {
		free_slow(p);
		return;
	}
	f(p);
}

CTP_EXPORT int munmap(void *addr, size_t len)
{
	CTP_REAL(munmap);
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state == CTP_THREAD_TRACING && !ctp_in_vfork_child() && len) {
		int saved_errno = errno;
		ctp_stackmap_retire_overlapping(t, (uint64_t)addr, (uint64_t)addr + len);
		errno = saved_errno;
	}
	return real_munmap(addr, len);
}

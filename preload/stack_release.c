/* A coroutine whose stack is given back has ended: it can never run again. Runtimes end their
 * coroutines in ways no switch shows: GNU Pth frees a finished thread's stack at pth_join, libpcl
 * in its delete helper, Boost.Coroutine (Asio's spawn) in the owner after the function returned.
 * Each frees the very block it handed to makecontext or make_fcontext. So free() and munmap() are
 * hooked: a coroutine, not running, whose stack starts at the freed pointer (or lies in the
 * unmapped range) is ended there, its station recycled.
 *
 * The block freed holds the stack, and may begin a little before it (at most HEADER_MAX: libpcl
 * puts its coroutine record first), or a page before a page-aligned one (SimGrid puts a guard page
 * first), or more (SimGrid's contexts/guard-size: a guard that an mprotect(PROT_NONE) of this
 * thread made right below the stack before the coroutine was made). free() is among the hottest
 * calls of a program (pdns-recursor makes 62 a query): the hook reads one byte that says whether
 * the block's set of a small table of the stack bases coroutines were made with (keyed by page) is
 * in use, and jumps to the real free without a frame of its own. A base in the first HEADER_MAX
 * bytes of its page is noted under the page before too, where a block that holds it may begin (a
 * header's, or a guard page's). Each set has BASE_WAYS places: stacks 16 or 32 MiB apart land in
 * one set (the key folds the page number's high bits onto its low ones), and with one place a
 * second base pushed the first out, whose coroutine was then never seen freed (Asio's spawn on
 * glibc's malloc: 2 or 3 of 101 coroutines left suspended at the end). A coroutine's base leaves
 * the table when the coroutine ends however it ends (ctp_stack_base_forget), so the places hold
 * live coroutines' bases: a new base goes to a free place, and only when every place is taken (more
 * live coroutines than places) is one pushed out, whose coroutine then ends when its stack is
 * reused instead. A candidate is checked further against the block's size. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>

#include "ctp/atomics.h"
#include "ctp/station.h"
#include "preload/compiler.h"
#include "preload/events.h"
#include "preload/real.h"
#include "preload/stack_release.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"

enum { BASE_SETS = 4096, BASE_WAYS = 4 };
/* A set is one cache line's half. set_used[i] is non-zero while set i may hold a base: the free
 * hook reads that byte alone, as most frees are of blocks that hold no stack. */
static uint64_t stack_bases[BASE_SETS][BASE_WAYS] __attribute__((aligned(64)));
static uint8_t set_used[BASE_SETS];

enum { PAGE_SHIFT = 12, PAGE_SIZE = 1 << PAGE_SHIFT, HEADER_MAX = 2048, GUARD_PAGES_MAX = 4096 };

/* transparency/stack_bases_one_set.c computes the same key to make stacks that share a set:
 * a change here is made there too. */
static inline uint32_t base_set(uint64_t p)
{
	uint64_t page = p >> PAGE_SHIFT;
	return (uint32_t)(page ^ (page >> 12)) & (BASE_SETS - 1);
}

/* Whether base may lie at the start of a block that begins at p: base >= p, and close (never
 * for an empty place, 0); or guard pages after p, where the base and p are page-aligned: SimGrid
 * takes a stack from posix_memalign, makes its first page (or pages) PROT_NONE, and hands
 * makecontext (or make_fcontext) the rest. Such a base is at the start of its page, so it is
 * noted under the page before too, and under a longer guard's first page when one was seen
 * (guard_below). What a match says is checked against the block's size (block_freed). */
static inline bool starts_block(uint64_t base, uint64_t p)
{
	return base - p < HEADER_MAX ||
	       ((base | p) % PAGE_SIZE == 0 && base - p <= (uint64_t)GUARD_PAGES_MAX * PAGE_SIZE);
}

static inline bool may_hold_base(uint64_t p)
{
	return __atomic_load_n(&set_used[base_set(p)], __ATOMIC_RELAXED) != 0;
}

static bool set_empty(uint32_t set)
{
	for (int w = 0; w < BASE_WAYS; w++)
		if (__atomic_load_n(&stack_bases[set][w], __ATOMIC_RELAXED))
			return false;
	return true;
}

/* Whether base is also noted under the page before its own: a block that holds it may begin
 * there. */
static inline bool noted_twice(uint64_t base)
{
	return (base & (PAGE_SIZE - 1)) < HEADER_MAX;
}

static size_t (*real_usable_size)(void *);

/* Places lo in the set: where it is already, else in a free place, else over one of the
 * others (chosen by lo's bits, so that a program with more live stacks than places does not
 * push the same place out every time). The places hold live coroutines' bases (an ended one's
 * is forgotten): looking for an ended one cost a stack-map lookup a place, four a coroutine
 * made once the table was full, the largest part of making a coroutine in a program with a
 * hundred thousand of them. Each place is taken with a compare-and-swap, so that two threads'
 * notes in one set never lose one of the two; only a full set pushes a base out. */
static void note_in(uint32_t set, uint64_t lo)
{
	uint64_t *ways = stack_bases[set];
	for (;;) {
		int place = -1;
		uint64_t seen = 0;
		for (int w = 0; w < BASE_WAYS; w++) {
			uint64_t v = __atomic_load_n(&ways[w], __ATOMIC_RELAXED);
			if (v == lo)
				return;
			if (place < 0 && v == 0)
				place = w;
		}
		if (place < 0) {
			place = (int)((lo >> PAGE_SHIFT) & (BASE_WAYS - 1));
			seen = __atomic_load_n(&ways[place], __ATOMIC_RELAXED);
		}
		/* A free place another thread's note took meanwhile (threads that make coroutines
		 * at once) is not written over: that base would be lost, and its coroutine never
		 * seen to end when its stack is freed. */
		if (__atomic_compare_exchange_n(&ways[place], &seen, lo, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	/* After the base: a free that sees the set unused cannot be of this block (it is in use
	 * as a stack until the coroutine is made). */
	__atomic_store_n(&set_used[set], 1, __ATOMIC_RELEASE);
}

/* The ranges the thread's last mprotect(PROT_NONE) calls made guards: a coroutine made on a stack
 * right above one has its block begin there. A few, for a program that makes its guarded stacks
 * first and its coroutines on them next. Apart from the thread's state, which its first traced
 * call sets up (SimGrid makes the guard of its first actor before that). */
enum { GUARDS_KEPT = 8 };
static __thread struct {
	uint64_t lo[GUARDS_KEPT], hi[GUARDS_KEPT];
	uint32_t next;
} guards __attribute__((tls_model("initial-exec")));

/* The first page of the guard right below a page-aligned base, if one of the thread's last
 * mprotect(PROT_NONE) calls made one of two pages or more ending there; 0 otherwise. */
static uint64_t guard_below(uint64_t lo)
{
	if (lo % PAGE_SIZE)
		return 0;
	for (int i = 0; i < GUARDS_KEPT; i++)
		if (guards.hi[i] == lo && lo - guards.lo[i] >= 2 * PAGE_SIZE &&
		    lo - guards.lo[i] <= (uint64_t)GUARD_PAGES_MAX * PAGE_SIZE)
			return guards.lo[i];
	return 0;
}

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
	note_in(base_set(lo), lo);
	if (noted_twice(lo))
		note_in(base_set(lo - PAGE_SIZE), lo);
	/* Under the guard's first page too, where the block begins. Forgotten there when that
	 * block is freed (block_freed); until then it only sends frees in that set to the slow
	 * path, whose check against the block's size tells them apart. */
	uint64_t guard = guard_below(lo);
	if (guard)
		note_in(base_set(guard), lo);
}

static void forget_in(uint32_t set, uint64_t base)
{
	bool took = false;
	for (int w = 0; w < BASE_WAYS; w++) {
		/* A locked instruction only where the place holds this base. */
		uint64_t expected = base;
		if (__atomic_load_n(&stack_bases[set][w], __ATOMIC_RELAXED) == base)
			took |= __atomic_compare_exchange_n(&stack_bases[set][w], &expected, 0,
							    false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
	}
	/* A base is forgotten twice when its block is freed before its coroutine ends (Boost
	 * frees a fiber's stack in its last switch): the second time changes nothing. */
	if (!took || !set_empty(set))
		return;
	/* Marked unused, then looked at again: a base another thread noted meanwhile either is
	 * seen here, or its note marks the set used after this store. */
	__atomic_store_n(&set_used[set], 0, __ATOMIC_SEQ_CST);
	if (!set_empty(set))
		__atomic_store_n(&set_used[set], 1, __ATOMIC_RELEASE);
}

void ctp_stack_base_forget(uint64_t base)
{
	forget_in(base_set(base), base);
	if (noted_twice(base))
		forget_in(base_set(base - PAGE_SIZE), base);
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
	ctp_stack_base_forget(base);
	if (p < base - PAGE_SIZE)
		forget_in(base_set(p), base); /* noted under its guard's first page */
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

/* The real free, found at the first call (or at the preload's start, ctp_free_resolve): until
 * then this stands in for it, so that the hook calls through the pointer without checking it
 * first (three instructions of each of the 120 or so frees a pdns-recursor query makes). dlsym
 * may itself free (the message of the dynamic linker's last failure, at its start): while the
 * lookup runs, a free of this thread leaks instead. The guard is volatile: GCC otherwise drops
 * its store before dlsym, seeing nothing outside this function read it, and the free inside
 * dlsym recursed until the stack overflowed (a process whose dlopen of libunwind failed with
 * EMFILE crashed at its next dlsym). */
static void free_unresolved(void *p);
static void (*real_free_fn)(void *) = free_unresolved;

static void (*lookup_free(void))(void *)
{
	static __thread volatile int resolving __attribute__((tls_model("initial-exec")));
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

static __attribute__((noinline)) void free_unresolved(void *p)
{
	void (*f)(void *) = lookup_free();
	if (f)
		f(p);
}

void ctp_free_resolve(void)
{
	if (__atomic_load_n(&real_free_fn, __ATOMIC_RELAXED) == free_unresolved)
		lookup_free();
}

/* A block that may hold a coroutine's stack. */
static __attribute__((noinline)) void free_slow(void *p)
{
	const uint64_t *ways = stack_bases[base_set((uint64_t)p)];
	for (int w = 0; w < BASE_WAYS; w++) {
		uint64_t base = __atomic_load_n(&ways[w], __ATOMIC_RELAXED);
		if (starts_block(base, (uint64_t)p))
			block_freed((uint64_t)p, base);
	}
	__atomic_load_n(&real_free_fn, __ATOMIC_RELAXED)(p);
}

/* Both calls are tail calls: the common path sets up no frame. */
CTP_EXPORT void free(void *p)
{
	if (CTP_UNLIKELY(may_hold_base((uint64_t)p))) {
		free_slow(p);
		return;
	}
	__atomic_load_n(&real_free_fn, __ATOMIC_RELAXED)(p);
}

/* Guards are made before the coroutines above them: the thread's last PROT_NONE ranges are kept
 * for the makes that may follow (guard_below). Nothing else is touched; errno is the real
 * call's. */
CTP_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	CTP_REAL(mprotect);
	int rc = real_mprotect(addr, len, prot);
	if (rc == 0 && prot == PROT_NONE && !ctp_in_vfork_child()) {
		uint32_t i = guards.next++ % GUARDS_KEPT;
		guards.lo[i] = (uint64_t)addr;
		guards.hi[i] = (uint64_t)addr + len;
	}
	return rc;
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

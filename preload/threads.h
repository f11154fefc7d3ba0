/* The preload's per-thread state (threads.c): the thread's ring producer, its current
 * coroutine, its lookup caches, and the BUSY state that makes re-entered hooks pass through. */
#ifndef CTP_PRELOAD_THREADS_H
#define CTP_PRELOAD_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/ring.h"
#include "preload/compiler.h"

struct ctp_station;

enum ctp_thread_state {
	CTP_THREAD_NEW = 0,
	CTP_THREAD_TRACING = 1,
	CTP_THREAD_BUSY = 2, /* inside the preload already: pass through */
	CTP_THREAD_OFF = 3,  /* exited, or no ring could be had */
};

enum { CTP_LOOKUP_SETS = 128, CTP_LOOKUP_SET_BITS = 7 };

/* A stack page resolved to a coroutine's station, with the station's address (see `lookup`
 * below). */
struct ctp_lookup_hint {
	uint64_t page; /* UINT64_MAX: empty */
	struct ctp_station *station;
	uint32_t idx;
};
/* The hints of a thread with no walk area yet (stackmap.c): every set empty, never written. */
extern const struct ctp_lookup_hint ctp_no_lookup_hints[CTP_LOOKUP_SETS][2] CTP_HIDDEN;

struct ctp_thread {
	int state;
	uint32_t tid;
	/* Where its stack walks and switches run (walk_stack.h): the top of the thread's walk
	 * stack (its mapping is found from it), NULL until mapped; on_walk_stack is set while code
	 * that switched to it runs there (the switch stubs read both: switch_stub.h). */
	uint8_t *walk_top;
	uint8_t on_walk_stack;
	uint32_t current; /* station of the coroutine running on this thread */
	uint32_t self;	  /* station of the thread's own stack */
	/* ctp_station_at(current) and ctp_station_at(self), set with them: a station never moves
	 * (stations.h), and a switch would otherwise compute both addresses again. */
	struct ctp_station *current_station;
	struct ctp_station *self_station;
	uint64_t stack_lo, stack_hi; /* the thread's own stack */
	uint64_t entry_hint;	     /* start routine, when the thread came from pthread_create */
	/* The last page resolved to this thread's own station (its own stack, or a stack nobody
	 * registered), good while no stack was registered since (the stack map's generation):
	 * switches back to the thread skip the map. */
	uint64_t own_page;
	uint64_t own_gen;
	/* Stack pages resolved to coroutine stations, with the stations' addresses, so that a
	 * switch to a context this thread resumed before skips the stack map: CTP_LOOKUP_SETS sets
	 * of two, the most recent first, chosen by a hash of the page (the suspend points of a
	 * runtime's coroutines lie at one offset in stacks of one size: their pages differ by a
	 * multiple of that size, and the page's low bits alone would crowd them into a few sets).
	 * Two places held the last two answers before; a Boost.Fiber ping-pong of 200 fibers sent
	 * one switch in three to the map. The sets live in the thread's walk area (walk_stack.h),
	 * ctp_no_lookup_hints until it is mapped: 6 KiB in the thread's TLS came out of every
	 * thread's stack (glibc carves static TLS from it), and a thread made with the least stack
	 * glibc allows, 16 KiB, overflowed it. */
	struct ctp_lookup_hint (*lookup)[2];
	struct ctp_ring_producer ring;
	void *altstack;	      /* the signal stack the preload gave this thread, if any */
	size_t altstack_size; /* its size, the guard page below it not counted (signal_stack.c) */
	/* Between vfork and the child's exec or exit, the child runs on this thread's memory:
	 * in_vfork_child is set and state is BUSY, so that every hook passes through. */
	int vfork_saved_state;
	uint8_t in_vfork_child;
	uint32_t slot; /* its thread slot (stackmap.h), CTP_MAX_THREAD_SLOTS when none */
	/* It made a coroutine on a buffer inside its own stack (a local array): at its exit such
	 * coroutines end with the stack (threads.c). */
	uint8_t coro_on_own_stack;
	uint8_t unwinder_tls; /* CTP_UNWINDER_TLS_*: whether it walks stacks (unwind_tls.c) */
};

enum {
	CTP_UNWINDER_TLS_UNDECIDED = 0, /* before its first walk */
	CTP_UNWINDER_TLS_WALKS,
	CTP_UNWINDER_TLS_REFUSED, /* its first walk would have cost it a malloc arena */
};

/* What the switch stubs (switch_stub.h) read, as numbers an asm string can hold. */
#define CTP_THREAD_STATE_AT 0
#define CTP_THREAD_WALK_TOP_AT 8
#define CTP_THREAD_ON_WALK_STACK_AT 16
#define CTP_THREAD_TRACING_VALUE 1
_Static_assert(__builtin_offsetof(struct ctp_thread, state) == CTP_THREAD_STATE_AT, "stubs");
_Static_assert(__builtin_offsetof(struct ctp_thread, walk_top) == CTP_THREAD_WALK_TOP_AT, "stubs");
_Static_assert(__builtin_offsetof(struct ctp_thread, on_walk_stack) == CTP_THREAD_ON_WALK_STACK_AT,
	       "stubs");
_Static_assert(CTP_THREAD_TRACING == CTP_THREAD_TRACING_VALUE, "stubs");

/* This thread's state, without starting it. For flags that are read and used between two
 * switches only; anything that spans a switch goes through ctp_thread_get. */
extern __thread struct ctp_thread ctp_tls_thread CTP_HIDDEN
	__attribute__((tls_model("initial-exec")));

/* Whether the code running now is a vfork child in its parent's memory (see vfork.c). */
static inline bool ctp_in_vfork_child(void)
{
	return __atomic_load_n(&ctp_tls_thread.in_vfork_child, __ATOMIC_RELAXED);
}

/* The calling thread's state, initialised on first use; NULL when this thread cannot trace.
 * Must be called again after any switch returns: the coroutine may now run on another thread.
 *
 * A compiler takes the thread pointer for constant within a function, and may reuse a TLS
 * address it computed before a call that switched contexts: on x86-64 the address is computed
 * by an asm volatile, which is never merged with another, so that each call reads %fs anew at
 * two instructions (it was a call of 23). Elsewhere, and for a thread not yet tracing, the
 * out-of-line ctp_thread_get_slow. */
CTP_HIDDEN struct ctp_thread *ctp_thread_get_slow(void);

static inline struct ctp_thread *ctp_thread_get(void)
{
#if defined(__x86_64__)
	struct ctp_thread *t;
	__asm__ volatile("movq ctp_tls_thread@gottpoff(%%rip), %0\n\t"
			 "addq %%fs:0, %0"
			 : "=r"(t));
	if (__builtin_expect(t->state == CTP_THREAD_TRACING, 1))
		return t;
#endif
	return ctp_thread_get_slow();
}

/* While a thread updates its stations and ring, hooks it reaches (libunwind's own reads of a
 * pipe, a signal handler that does I/O) must pass through, or they would write into the ring
 * in the middle of a record. ctp_thread_get returns NULL for a busy thread. */
static inline int ctp_thread_enter(struct ctp_thread *t)
{
	int previous = t->state;
	t->state = CTP_THREAD_BUSY;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return previous;
}

static inline void ctp_thread_leave(struct ctp_thread *t, int previous)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->state = previous;
}
CTP_HIDDEN void ctp_threads_fork_child(void);
/* Opens /proc/self/maps, which each new thread reads for its stack's bounds: at the start of
 * tracing and in a fork child, while no other thread of the program runs. */
CTP_HIDDEN void ctp_threads_open_maps(void);
CTP_HIDDEN void ctp_threads_close_maps(void);

#endif

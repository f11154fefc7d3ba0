/* Suspend stacks with libunwind's unw_backtrace (about 90 ns for 13 frames). libunwind is
 * loaded privately (RTLD_LOCAL): linked normally, its exported _Unwind_* would take over C++
 * exception handling in the traced program. Symbolization happens in the collector. */
#include <dlfcn.h>
#include <errno.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/process.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"
#include "preload/fork_guard.h"
#include "preload/modules.h"
#include "preload/unwind.h"
#include "preload/walk_stack.h"

typedef int (*backtrace_fn)(void **buffer, int size);
static backtrace_fn unw_backtrace_fn;
static void *unwind_lib;
/* A walk runs inside a fork guard (fork_guard.h): libunwind finds unwind tables with
 * dl_iterate_phdr, and a fork also copies libunwind's caches as they are. A walk is skipped
 * (no frames) while a fork is under way. */
static inline bool walk_begin(void)
{
	return ctp_fork_guard_try_enter();
}

static inline void walk_end(void)
{
	ctp_fork_guard_leave();
}

void ctp_unwind_fork_child(void)
{
	/* No other thread can have been walking; only this one, if the program forked from a
	 * signal handler that interrupted one of its walks: that walk never ends here. */
	if (ctp_fork_guard_held() && unw_backtrace_fn) {
		unw_backtrace_fn = NULL;
		ctp_log("forked from inside a stack walk: no suspend stacks in this child", NULL,
			NULL);
	}
}

void *ctp_unwind_symbol(const char *name)
{
	if (!unwind_lib || !unw_backtrace_fn)
		return NULL; /* off: not found, or torn at a fork */
	int saved_errno = errno;
	void *f = dlsym(unwind_lib, name);
	errno = saved_errno;
	return f;
}

bool ctp_unwind_walk_begin(void)
{
	return walk_begin();
}

void ctp_unwind_walk_end(void)
{
	walk_end();
}

void ctp_unwind_init(void)
{
	/* RTLD_NOW: a walk must never resolve a symbol lazily on a small coroutine stack (the
	 * dynamic linker's resolver needs kilobytes of it). */
	int saved_errno = errno;
	void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		unw_backtrace_fn = (backtrace_fn)dlsym(lib, "unw_backtrace");
	unwind_lib = lib;
	if (unw_backtrace_fn)
		ctp_unwinder_note(
			(const void *)unw_backtrace_fn); /* before libunwind opens its pipe */
	if (!unw_backtrace_fn) {
		/* dlerror() also takes the failure off the record: the program's next dlerror()
		 * says nothing of the preload's. */
		const char *why = dlerror();
		ctp_log("suspend stacks are off: ",
			why ? why : "libunwind.so.8 has no unw_backtrace", NULL);
	} else {
		/* The first walk sets libunwind up (it reads the program's memory map): here, on
		 * the thread's own stack, not on a coroutine's. */
		void *warm[4];
		unw_backtrace_fn(warm, 4);
	}
	errno = saved_errno;
}

/* The pass at exit (unwind_saved.c) walks on the stack it runs on, and needs several KiB of it
 * (3.3-6.6 KB measured with libunwind 1.6 on x86-64): with less room than this left on a
 * coroutine's stack it would run past the stack's end and corrupt whatever lies below. */
enum { UNWIND_ROOM = 8192 };

bool ctp_unwind_room(void)
{
	uint64_t sp = (uint64_t)__builtin_frame_address(0);
	uint64_t lo;
	uint32_t idx = ctp_stackmap_find(sp);
	if (idx != CTP_NO_STATION) {
		lo = CTP_LOAD_RELAXED(&ctp_station_at(idx)->stack_lo);
	} else {
		/* The thread's own stack; anything else (a context made by hand, a signal stack)
		 * has unknown bounds: no walk there. */
		struct ctp_thread *t = &ctp_tls_thread;
		if (sp < t->stack_lo || sp >= t->stack_hi)
			return false;
		lo = t->stack_lo;
	}
	return sp >= lo && sp - lo >= UNWIND_ROOM;
}

/* A walk runs on the thread's walk stack (walk_stack.c), but only of a stack whose bounds are
 * known: a coroutine's, or the thread's own. A context the program made by hand, or a signal
 * stack, may end in anything; no stack is better than a broken program. The top of the known
 * stack that holds sp, 0 when there is none. */
static uint64_t known_stack_top(uint64_t sp)
{
	struct ctp_thread *t = &ctp_tls_thread;
	/* Nearly always the stack of the coroutine running here (a walk at its switch or at a
	 * coroutine's making): its station answers without the stack map's three levels. (Not a
	 * thread's own station: a coroutine's stack may be a buffer on the thread's stack, and the
	 * map answers for it first.) */
	const struct ctp_station *current = t->current_station;
	if (current && CTP_LOAD_RELAXED(&current->kind) != CTP_KIND_THREAD &&
	    ctp_station_live_over_at(current, sp, sp + 1))
		return CTP_LOAD_RELAXED(&current->stack_hi);
	bool on_own_stack = sp >= t->stack_lo && sp < t->stack_hi;
	if (on_own_stack && !ctp_thread_stack_may_hold_coroutines(t))
		return t->stack_hi; /* a walk at a making on the thread's stack */
	uint32_t idx = ctp_stackmap_find(sp);
	if (idx != CTP_NO_STATION)
		return CTP_LOAD_RELAXED(&ctp_station_at(idx)->stack_hi);
	return on_own_stack ? t->stack_hi : 0;
}

/* unw_backtrace into the area's frames, from the caller (its first frame), on the stack this
 * runs on; none in a thread that libunwind's thread-local cache would cost too much
 * (unwind_tls.c). libunwind's own probes (a pipe it reads) can leave EAGAIN: errno is kept; its
 * address is fixed for a thread's life, so that a walk does not pay two calls to find it. */
static __attribute__((always_inline)) inline int walk_here(struct ctp_walk_area *area, int max)
{
	static __thread int *errno_at __attribute__((tls_model("initial-exec")));
	if (CTP_UNLIKELY(!errno_at))
		errno_at = &errno;
	/* The modules of the frames about to be found (modules.c). */
	ctp_modules_scan();
	if (!walk_begin())
		return 0;
	int saved_errno = *errno_at;
	struct ctp_thread *t = &ctp_tls_thread;
	int n = 0;
	if (CTP_LIKELY(t->unwinder_tls == CTP_UNWINDER_TLS_WALKS) ||
	    (t->unwinder_tls == CTP_UNWINDER_TLS_UNDECIDED && ctp_unwinder_tls_decide(t)))
		n = unw_backtrace_fn(area->frames, max);
	*errno_at = saved_errno;
	walk_end();
	return n;
}

/* What a walk switched to the walk stack needs and finds. */
struct walk {
	struct ctp_walk_area *area;
	int max;
	int n;
};

static void walk_on_walk_stack(void *arg)
{
	struct walk *w = arg;
	w->n = walk_here(w->area, w->max);
}

/* A walk from the caller of the caller, run on the walk stack: its first frames are
 * walk_on_walk_stack, ctp_on_walk_stack and the caller. Fills the thread's walk area; returns
 * how many frames, 0 when it cannot walk. `known`: whether the stack walked has known bounds
 * (known_stack_top). */
static __attribute__((always_inline)) inline int walk(struct ctp_walk_area **area, int max,
						      bool known)
{
	if (!unw_backtrace_fn || !known)
		return 0;
	struct ctp_thread *t = &ctp_tls_thread;
	struct walk w = {.area = ctp_walk_area_get(t), .max = max};
	if (!w.area || !ctp_walk_stack_run(t, w.area, walk_on_walk_stack, &w))
		return 0;
	*area = w.area;
	return w.n;
}

/* The walk stack's own frames at the top of a walk. */
enum { WALK_STACK_FRAMES = 2 };

__attribute__((noinline)) uint32_t ctp_unwind(const uint64_t **frames, uint32_t max, uint32_t skip)
{
	struct ctp_walk_area *area = NULL; /* set by a walk that finds frames */
	if (max == 0)
		return 0;
	skip += WALK_STACK_FRAMES + 1; /* and this function's own frame */
	if (skip > CTP_WALK_OWN_FRAMES_MAX)
		skip = CTP_WALK_OWN_FRAMES_MAX;
	int n = walk(&area, (int)(max + skip),
		     known_stack_top((uint64_t)__builtin_frame_address(0)));
	if (n <= (int)skip)
		return 0;
	*frames = (const uint64_t *)&area->frames[skip];
	return (uint32_t)n - skip;
}

/* The frames of a walk from call_site on. */
static uint32_t from_call_site(struct ctp_walk_area *area, int n, const uint64_t **frames,
			       uint32_t max, uint64_t call_site)
{
	for (int i = 0; i < n && i < CTP_WALK_OWN_FRAMES_MAX; i++) {
		if ((uint64_t)area->frames[i] != call_site)
			continue;
		*frames = (const uint64_t *)&area->frames[i];
		return (uint32_t)(n - i) < max ? (uint32_t)(n - i) : max;
	}
	return 0;
}

__attribute__((noinline)) uint32_t ctp_unwind_from(const uint64_t **frames, uint32_t max,
						   uint64_t call_site, uint64_t slot)
{
	struct ctp_walk_area *area = NULL; /* set by a walk that finds frames */
	if (!unw_backtrace_fn || max == 0 || call_site == 0)
		return 0; /* nothing to walk with: no walk area mapped for a memo either */
	uint64_t top = slot ? known_stack_top(slot) : 0;
	struct ctp_walk_area *memo = top ? ctp_walk_area_get(&ctp_tls_thread) : NULL;
	uint32_t n = memo ? ctp_unwind_memo_find(&memo->memo, slot, top, max, frames) : 0;
	if (n)
		return n;
	/* The stack walked is the one that holds slot, known or not, also when this runs on the
	 * walk stack (a coroutine's making, coro_make.h), whose frames link back into it. */
	bool known = slot ? top != 0 : known_stack_top((uint64_t)__builtin_frame_address(0)) != 0;
	/* The walk first: it sets area, and a call's arguments are evaluated in no set order
	 * (read before the walk, area was whatever the stack held). */
	int walked = walk(&area, (int)(max + CTP_WALK_OWN_FRAMES_MAX), known);
	n = from_call_site(area, walked, frames, max, call_site);
	if (n && memo)
		ctp_unwind_memo_note(&memo->memo, slot, top, *frames, n);
	return n;
}

uint32_t ctp_unwind_remembered(struct ctp_walk_area *area, const uint64_t **frames, uint32_t max,
			       uint64_t sp, const struct ctp_station *running)
{
	/* As known_stack_top answers first, without its checks of a station that may have ended:
	 * the running coroutine's is live. */
	uint64_t top = CTP_LOAD_RELAXED(&running->stack_hi);
	if (CTP_LOAD_RELAXED(&running->kind) == CTP_KIND_THREAD ||
	    sp < CTP_LOAD_RELAXED(&running->stack_lo) || sp >= top)
		top = known_stack_top(sp);
	return top ? ctp_unwind_memo_find(&area->memo, sp, top, max, frames) : 0;
}

uint32_t ctp_unwind_from_walk_stack(struct ctp_walk_area *area, const uint64_t **frames,
				    uint32_t max, uint64_t call_site, uint64_t sp)
{
	uint64_t top = known_stack_top(sp);
	if (!unw_backtrace_fn || max == 0 || call_site == 0 || top == 0)
		return 0;
	uint32_t n = ctp_unwind_memo_find(&area->memo, sp, top, max, frames);
	if (n)
		return n;
	n = from_call_site(area, walk_here(area, (int)(max + CTP_WALK_OWN_FRAMES_MAX)), frames, max,
			   call_site);
	if (n)
		ctp_unwind_memo_note(&area->memo, sp, top, *frames, n);
	return n;
}

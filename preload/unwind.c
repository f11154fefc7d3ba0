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
#include "preload/unwind.h"

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
		ctp_log("libunwind.so.8 not found: suspend stacks are off", NULL, NULL);
	} else {
		/* The first walk sets libunwind up (it reads the program's memory map): here, on
		 * the thread's own stack, not on a coroutine's. */
		void *warm[4];
		unw_backtrace_fn(warm, 4);
	}
	errno = saved_errno;
}

/* A walk runs on the stack it walks and needs several KiB of it (3.3-6.6 KB measured with
 * libunwind 1.6 on x86-64): with less room than this left on a coroutine's stack it would run
 * past the stack's end and corrupt whatever lies below (libpcl runs its delete helper on 4 KiB,
 * next to the thread's main context). No stack is better than a broken program. */
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

__attribute__((noinline)) uint32_t ctp_unwind(uint64_t *frames, uint32_t max, uint32_t skip)
{
	void *buf[CTP_MAX_STACK_DEPTH + 8];
	if (!unw_backtrace_fn || max == 0 || !ctp_unwind_room())
		return 0;
	skip += 1; /* this function's own frame */
	if (skip > 8)
		skip = 8;
	/* libunwind's own probes (a pipe it reads) can leave EAGAIN. errno's address is fixed for
	 * a thread's life: kept, so that a walk does not pay two calls to find it. */
	static __thread int *errno_at __attribute__((tls_model("initial-exec")));
	if (CTP_UNLIKELY(!errno_at))
		errno_at = &errno;
	if (!walk_begin())
		return 0;
	int saved_errno = *errno_at;
	int n = unw_backtrace_fn(buf, (int)(max + skip));
	*errno_at = saved_errno;
	walk_end();
	if (n <= (int)skip)
		return 0;
	uint32_t got = (uint32_t)n - skip;
	for (uint32_t i = 0; i < got; i++)
		frames[i] = (uint64_t)buf[i + skip];
	return got;
}

/* Frames of the preload's own that can lie above a hook's call site (hook, assembly stub,
 * inlined helpers that did not inline). */
enum { OWN_FRAMES_MAX = 8 };

__attribute__((noinline)) uint32_t ctp_unwind_from(uint64_t *frames, uint32_t max,
						   uint64_t call_site)
{
	void *buf[CTP_MAX_STACK_DEPTH + OWN_FRAMES_MAX];
	if (!unw_backtrace_fn || max == 0 || call_site == 0 || !ctp_unwind_room())
		return 0;
	if (!walk_begin())
		return 0;
	int saved_errno = errno;
	int n = unw_backtrace_fn(buf, (int)(max + OWN_FRAMES_MAX));
	errno = saved_errno;
	walk_end();
	for (int i = 0; i < n && i < OWN_FRAMES_MAX; i++) {
		if ((uint64_t)buf[i] != call_site)
			continue;
		uint32_t got = (uint32_t)(n - i) < max ? (uint32_t)(n - i) : max;
		for (uint32_t k = 0; k < got; k++)
			frames[k] = (uint64_t)buf[i + (int)k];
		return got;
	}
	return 0;
}

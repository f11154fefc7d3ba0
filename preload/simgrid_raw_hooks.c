/* SimGrid's raw contexts, its default on x86-64: raw_makecontext and raw_swapcontext, assembly
 * functions libsimgrid exports and calls through its PLT (RawContext), so that they can be
 * interposed as Boost.Context's are. A raw context is the saved stack pointer of the suspended
 * side, as an fcontext is: a target is known by the stack it points into, which
 * raw_makecontext registers in the stack map.
 *
 * raw_swapcontext(old, new) pushes rdi, rsi, rdx, rcx, r8, r9, rbp, rbx, r12, r13, r14 and r15
 * below its return address, stores the stack pointer in *old, and pops the same from `new`
 * (read from SimGrid's code, stable since its x86-64 raw contexts began). Its stub, like
 * jump_fcontext's, calls the C part with the caller's return slot and jumps to the real function
 * with the stack as the caller left it, so the saved context is ret_slot - RAW_FRAME
 * (CTP_CTX_SIMGRID_RAW, ctp/saved_frame.h).
 *
 * An actor's context never returns: when the actor is done it switches away for good, and
 * SimGrid frees the stack when it destroys the context, which the free hook sees
 * (stack_release.c: SimGrid puts a guard page before the stack). */
#include <errno.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/coro_make.h"
#include "preload/events.h"
#include "preload/process.h"
#include "preload/real_lookup.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/switch_path.h"
#include "preload/switch_stub.h"
#include "preload/threads.h"
#include "preload/walk_stack.h"

typedef void (*raw_entry_fn)(void *);
CTP_EXPORT void raw_swapcontext(void **old, void *to);
CTP_EXPORT void *raw_makecontext(void *stack, int size, raw_entry_fn entry, void *arg);

enum { RAW_FRAME = 12 * 8 };

void *ctp_raw_swapcontext_enter(void **old, void *to, uint64_t *ret_slot) CTP_HIDDEN;

/* clang-format off */
__asm__(CTP_SWITCH_STUB_PROLOGUE("raw_swapcontext")
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	leaq 8(%rbp), %rdx\n" /* ret_slot */
	"	call ctp_raw_swapcontext_enter\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	CTP_SWITCH_STUB_EPILOGUE("raw_swapcontext"));
/* clang-format on */

/* The real functions, looked up per caller (CTP_REAL_FOR_CALLER): libsimgrid may be loaded
 * RTLD_LOCAL (real_lookup.c). */
static struct ctp_real_cache real_swap, real_make;

void *ctp_raw_swapcontext_enter(void **old, void *to, uint64_t *ret_slot)
{
	(void)old;
	__typeof__(raw_swapcontext) *real_raw_swapcontext =
		CTP_REAL_FOR_CALLER(real_swap, raw_swapcontext, (void *)*ret_slot);
	struct ctp_thread *t = ctp_thread_get();
	if (t && to) {
		uint64_t now = ctp_now();
		ctp_walk_area_get(t); /* the thread's next switches run there */
		struct ctp_stack_owner target = ctp_stack_owner(t, (uint64_t)to);
		if (target.idx != t->current) {
			struct ctp_suspend_point at = {.call_site = *ret_slot,
						       .ret_slot = (uint64_t)ret_slot,
						       .ctx = (uint64_t)ret_slot - RAW_FRAME,
						       .ctx_kind = CTP_CTX_SIMGRID_RAW};
			ctp_switch_from(t, target.idx, target.station, CTP_HOW_RAW_SWAPCONTEXT,
					CTP_STATE_SUSPENDED, at, now);
		}
	}
	/* The stub jumps to it; it returns when someone switches back to us. */
	return (void *)real_raw_swapcontext;
}

CTP_EXPORT void *raw_makecontext(void *stack, int size, raw_entry_fn entry, void *arg)
{
	__typeof__(raw_makecontext) *real_raw_makecontext =
		CTP_REAL_FOR_CALLER(real_make, raw_makecontext, __builtin_return_address(0));
	void *ctx = real_raw_makecontext(stack, size, entry, arg);
	struct ctp_thread *t = ctp_thread_get();
	if (!t || !ctx || size <= 0)
		return ctx;
	int saved_errno = errno;
	uint64_t lo = (uint64_t)stack;
	ctp_coro_make(t, ctp_coro_new_id(), CTP_KIND_SIMGRID_RAW, (uint64_t)entry, lo,
		      lo + (uint64_t)size, (uint64_t)ctx, CTP_CREATED_HERE());
	errno = saved_errno;
	return ctx;
}

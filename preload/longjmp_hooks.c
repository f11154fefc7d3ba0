/* sigsetjmp/siglongjmp as a context switch. QEMU's coroutines start with makecontext and one
 * swapcontext, and from then on switch with sigsetjmp(from) + siglongjmp(to) (FACTS: qemu-img
 * convert, 17 swapcontext against ~945 siglongjmp). A jump whose saved stack pointer lies in
 * another coroutine's stack is a switch to that coroutine; the coroutine that jumps saved itself
 * with sigsetjmp just before, so it is suspended, not ended. A jump within one stack (error
 * handling, the common use of longjmp) is no switch and costs a lookup.
 *
 * The saved stack pointer is mangled in the jmp_buf: glibc stores it xor'ed with the thread's
 * pointer guard (at %fs:0x30 on x86-64) and rotated left by 0x11 bits. Undoing that in-process
 * needs nothing but the same guard, which every thread of the process shares.
 *
 * These hooks never return: a C wrapper's frame is simply left behind with the rest of the stack
 * the jump abandons, as the jump's own frame is. */
#define _GNU_SOURCE
#include <setjmp.h>

#include "preload/compiler.h"
#include "preload/events.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/stackmap.h"
#include "preload/threads.h"

void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));

enum { JB_RSP = 6, POINTER_MANGLE_ROTATE = 0x11 };

static inline uint64_t saved_sp(const struct __jmp_buf_tag *env)
{
	uint64_t v = (uint64_t)env->__jmpbuf[JB_RSP];
	uint64_t guard;
	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	v = (v >> POINTER_MANGLE_ROTATE) | (v << (64 - POINTER_MANGLE_ROTATE));
	return v ^ guard;
}

/* Always inlined, so that its return address is the hook's: the switch's call site. The
 * registers in env are mangled and belong to the target, not to the side that leaves: the call
 * site only. */
static inline __attribute__((always_inline)) void note_jump(const struct __jmp_buf_tag *env)
{
	struct ctp_thread *t = ctp_thread_get();
	if (!t || !env)
		return;
	uint64_t now = ctp_now();
	uint32_t to = ctp_station_for_sp(t, saved_sp(env));
	if (to != t->current) {
		struct ctp_suspend_point at = {.call_site = (uint64_t)__builtin_return_address(0),
					       .ret_slot =
						       (uint64_t)__builtin_frame_address(0) + 8};
		ctp_coro_switch(t, to, CTP_HOW_SIGLONGJMP, &at, now);
	}
}

CTP_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	CTP_REAL(siglongjmp);
	note_jump(env);
	real_siglongjmp(env, val);
	__builtin_unreachable();
}

CTP_EXPORT void longjmp(jmp_buf env, int val)
{
	CTP_REAL(longjmp);
	note_jump(env);
	real_longjmp(env, val);
	__builtin_unreachable();
}

CTP_EXPORT void _longjmp(jmp_buf env, int val)
{
	CTP_REAL(_longjmp);
	note_jump(env);
	real__longjmp(env, val);
	__builtin_unreachable();
}

/* What -D_FORTIFY_SOURCE programs (QEMU among them) call for longjmp and siglongjmp. */
CTP_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	CTP_REAL(__longjmp_chk);
	note_jump(env);
	real___longjmp_chk(env, val);
	__builtin_unreachable();
}

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
 * These hooks never return: their frames are simply left behind with the rest of the stack the
 * jump abandons, as the jump's own frame is. */
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

/* Each hook is entered through an assembly stub that pushes the caller's callee-saved registers
 * below its return address, in the layout of a Boost.Context frame (8 bytes where the control
 * words would be, r12, r13, r14, r15, rbx, rbp, then the return address), and calls the C part
 * with that frame's address. The frame is the suspended side's saved context (CTP_CTX_FCONTEXT):
 * the jump abandons the stack below the caller's frame, and the coroutine that jumps resumes
 * through the sigsetjmp it made before, above it, so the frame stays untouched for as long as it
 * is suspended, and its whole stack can be unwound from there later (the collector, the exit
 * pass), as for any other switch. The C part never returns: it ends in the real function. */
enum { JMP_FRAME_RET = 7 }; /* the return address, in 8-byte words from the frame's start */

enum jmp_kind { JMP_SIGLONGJMP, JMP_LONGJMP, JMP__LONGJMP, JMP_LONGJMP_CHK };

__attribute__((noreturn)) void ctp_longjmp_enter(struct __jmp_buf_tag *env, int val,
						 uint64_t *frame, uint32_t kind) CTP_HIDDEN;

/* Entry: rsp = 8 mod 16; six pushes and 8 bytes make the frame and align the call. */
#define JMP_STUB(name, kind)                                                                       \
	__asm__(".text\n"                                                                          \
		".p2align 4\n"                                                                     \
		".globl " #name "\n"                                                               \
		".type " #name ", @function\n" #name ":\n"                                         \
		"	.cfi_startproc\n"                                                                \
		"	pushq %rbp\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %rbp, 0\n"                                                       \
		"	pushq %rbx\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %rbx, 0\n"                                                       \
		"	pushq %r15\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %r15, 0\n"                                                       \
		"	pushq %r14\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %r14, 0\n"                                                       \
		"	pushq %r13\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %r13, 0\n"                                                       \
		"	pushq %r12\n"                                                                    \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	.cfi_rel_offset %r12, 0\n"                                                       \
		"	subq $8, %rsp\n"                                                                 \
		"	.cfi_adjust_cfa_offset 8\n"                                                      \
		"	movq %rsp, %rdx\n" /* the frame */                                         \
		"	movl $" #kind ", %ecx\n"                                                   \
		"	call ctp_longjmp_enter\n"                                                        \
		"	ud2\n"                                                                           \
		"	.cfi_endproc\n"                                                                  \
		".size " #name ", .-" #name "\n")

JMP_STUB(siglongjmp, 0);
JMP_STUB(longjmp, 1);
JMP_STUB(_longjmp, 2);
JMP_STUB(__longjmp_chk, 3);
_Static_assert(JMP_SIGLONGJMP == 0 && JMP_LONGJMP == 1 && JMP__LONGJMP == 2 && JMP_LONGJMP_CHK == 3,
	       "the stubs pass these numbers");

/* A jump into another coroutine's stack suspends the current one at the stub's frame. */
static void note_jump(const struct __jmp_buf_tag *env, uint64_t *frame)
{
	struct ctp_thread *t = ctp_thread_get();
	if (!t || !env)
		return;
	uint64_t now = ctp_now();
	uint32_t to = ctp_station_for_sp(t, saved_sp(env));
	if (to != t->current) {
		struct ctp_suspend_point at = {.call_site = frame[JMP_FRAME_RET],
					       .ret_slot = (uint64_t)&frame[JMP_FRAME_RET],
					       .ctx = (uint64_t)frame,
					       .ctx_kind = CTP_CTX_FCONTEXT};
		ctp_coro_switch(t, to, CTP_HOW_SIGLONGJMP, &at, now);
	}
}

void ctp_longjmp_enter(struct __jmp_buf_tag *env, int val, uint64_t *frame, uint32_t kind)
{
	note_jump(env, frame);
	switch (kind) {
	case JMP_SIGLONGJMP: {
		CTP_REAL(siglongjmp);
		real_siglongjmp(env, val);
		__builtin_unreachable();
	}
	case JMP_LONGJMP: {
		CTP_REAL(longjmp);
		real_longjmp(env, val);
		__builtin_unreachable();
	}
	case JMP__LONGJMP: {
		CTP_REAL(_longjmp);
		real__longjmp(env, val);
		__builtin_unreachable();
	}
	default: {
		CTP_REAL(__longjmp_chk);
		real___longjmp_chk(env, val);
		__builtin_unreachable();
	}
	}
}

/* Assembly entries of the switch hooks whose real function must see the stack exactly as its
 * caller left it (Boost's jump_fcontext/ontop_fcontext, glibc's swapcontext/setcontext: they
 * save the caller's registers and stack pointer). A stub calls the hook's C part, which records
 * the switch and returns the real function, and then jumps to it with the caller's stack and
 * argument registers.
 *
 * The C part runs on the thread's walk stack (walk_stack.h), not on the coroutine's: coroutine
 * stacks are often small and malloc'd, and every byte the tracer uses below the program's own
 * frames is on average a byte more of resident memory per coroutine (the share of them whose
 * next page it reaches), and a byte less of room. So the stub keeps only its frame pointer on the
 * coroutine's stack (8 bytes; Boost's switch itself uses 48) and switches. It stays on the stack
 * it came on when the thread is not tracing (BUSY: inside the preload, or a vfork child), has no
 * walk stack yet, or the walk stack is in use by code this interrupted (a signal handler that
 * switches). The flag is set before the switch and cleared once back on the coroutine's stack,
 * so that a handler that lands in between stays where it is. Whatever the path,
 * CFA = rbp + 16 from the second instruction to the epilogue: walks and debuggers go through the
 * stub into the caller.
 *
 * Between CTP_SWITCH_STUB_PROLOGUE(name) and CTP_SWITCH_STUB_EPILOGUE(name), a stub saves its
 * argument registers, calls its C part with rbp + 8 (the caller's return address: ret_slot) and
 * restores them; rax holds the real function at the epilogue. At the end of the prologue the
 * stack is 16-aligned either way (the walk stack's top is; the caller's is one push after the
 * call), and r10, r11 are free. */
#ifndef CTP_PRELOAD_SWITCH_STUB_H
#define CTP_PRELOAD_SWITCH_STUB_H

#include "preload/threads.h"

/* clang-format off */
#define CTP_STUB_STR2(x) #x
#define CTP_STUB_STR(x) CTP_STUB_STR2(x)
#define CTP_STUB_STATE CTP_STUB_STR(CTP_THREAD_STATE_AT) "(%r11)"
#define CTP_STUB_WALK_TOP CTP_STUB_STR(CTP_THREAD_WALK_TOP_AT) "(%r11)"
#define CTP_STUB_ON_WALK_STACK CTP_STUB_STR(CTP_THREAD_ON_WALK_STACK_AT) "(%r11)"
#define CTP_STUB_THREAD_IN_R11 \
	"	movq ctp_tls_thread@gottpoff(%rip), %r11\n" \
	"	addq %fs:0, %r11\n"

#define CTP_SWITCH_STUB_PROLOGUE(name) \
	".text\n" \
	".p2align 4\n" \
	".globl " name "\n" \
	".type " name ", @function\n" \
	name ":\n" \
	"	.cfi_startproc\n" \
	"	pushq %rbp\n" \
	"	.cfi_adjust_cfa_offset 8\n" \
	"	.cfi_rel_offset %rbp, 0\n" \
	"	movq %rsp, %rbp\n" \
	"	.cfi_def_cfa_register %rbp\n" \
	CTP_STUB_THREAD_IN_R11 \
	"	cmpl $" CTP_STUB_STR(CTP_THREAD_TRACING_VALUE) ", " CTP_STUB_STATE "\n" \
	"	jne 1f\n" \
	"	movq " CTP_STUB_WALK_TOP ", %r10\n" \
	"	testq %r10, %r10\n" \
	"	jz 1f\n" \
	"	cmpb $0, " CTP_STUB_ON_WALK_STACK "\n" \
	"	jne 1f\n" \
	"	movb $1, " CTP_STUB_ON_WALK_STACK "\n" \
	"	movq %r10, %rsp\n" \
	"1:\n"

/* With the argument registers back: whether the stub switched is whether rsp is back at rbp. */
#define CTP_SWITCH_STUB_EPILOGUE(name) \
	"	cmpq %rsp, %rbp\n" \
	"	movq %rbp, %rsp\n" \
	"	.cfi_def_cfa_register %rsp\n" \
	"	popq %rbp\n" \
	"	.cfi_adjust_cfa_offset -8\n" \
	"	.cfi_restore %rbp\n" \
	"	je 2f\n" \
	CTP_STUB_THREAD_IN_R11 \
	"	movb $0, " CTP_STUB_ON_WALK_STACK "\n" \
	"2:\n" \
	"	jmpq *%rax\n" \
	"	.cfi_endproc\n" \
	".size " name ", .-" name "\n"
/* clang-format on */

#endif

/* glibc ucontext: swapcontext, setcontext and makecontext. getcontext is left alone on purpose:
 * a C wrapper's frame would be gone when the saved context is resumed, and the program would
 * break silently (a getcontext/setcontext loop runs once instead of n times).
 *
 * A makecontext coroutine's return is invisible to hooks: glibc's __start_context switches to
 * uc_link by itself. So the context starts in an entry trampoline of ours instead of the
 * program's function, with everything else exactly as glibc laid it out (arguments in registers
 * and on the new stack, any number of them). The trampoline finds the program's function, the
 * station and uc_link in callee-saved registers of the context itself, not in memory of ours:
 * nothing can be recycled or lost between makecontext and the first run, and the entry function
 * preserves them for us by the ABI. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <ucontext.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/coro_make.h"
#include "preload/events.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/segment.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/switch_path.h"
#include "preload/switch_stub.h"
#include "preload/threads.h"
#include "preload/walk_stack.h"

/* Calls `real` (glibc's makecontext) with ucp, fn, argc and the arguments: the first three in
 * rcx, r8, r9 from reg_args, the rest pushed from stack_args, so that glibc sees exactly the
 * call the program made. */
void ctp_makecontext_forward(void *real, ucontext_t *ucp, void (*fn)(void), int argc,
			     const uint64_t *reg_args, const uint64_t *stack_args) CTP_HIDDEN;
__asm__(".text\n"
	".p2align 4\n"
	".globl ctp_makecontext_forward\n"
	".hidden ctp_makecontext_forward\n"
	".type ctp_makecontext_forward, @function\n"
	"ctp_makecontext_forward:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	movq %rdi, %r11\n"   /* real */
	"	movslq %ecx, %rax\n" /* argc */
	"	subq $3, %rax\n"     /* arguments passed on the stack */
	"	jle 2f\n"
	"	testq $1, %rax\n" /* keep the stack 16-byte aligned at the call */
	"	jz 1f\n"
	"	subq $8, %rsp\n"
	"1:	movq -8(%r9,%rax,8), %r10\n"
	"	pushq %r10\n"
	"	decq %rax\n"
	"	jnz 1b\n"
	"2:	movq %rsi, %rdi\n" /* ucp */
	"	movq %rdx, %rsi\n" /* fn */
	"	movl %ecx, %edx\n" /* argc */
	"	movq 0(%r8), %rcx\n"
	"	movq 16(%r8), %r9\n"
	"	movq 8(%r8), %r8\n"
	"	xorl %eax, %eax\n" /* no vector registers in a variadic call */
	"	call *%r11\n"
	"	leave\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size ctp_makecontext_forward, .-ctp_makecontext_forward\n");

/* Where a traced makecontext coroutine starts. On entry the registers and the stack are what
 * glibc prepared for the program's function; [rsp] is glibc's return path (__start_context).
 * r12 = the program's function, r13 = station, r14 = coroutine id, r15 = uc_link (set by our
 * makecontext). The return path moves to rbp and the function returns here instead; then the
 * end is recorded and glibc's path taken, with the stack as the function left it. Unwinding
 * stops here (rip undefined): this is the coroutine's outermost frame. */
void ctp_makecontext_entry(void) CTP_HIDDEN;
void ctp_makecontext_entry_end(void) CTP_HIDDEN;
void ctp_makecontext_returned(uint32_t idx, uint64_t coro, const ucontext_t *link) CTP_HIDDEN;
__asm__(".text\n"
	".p2align 4\n"
	".globl ctp_makecontext_entry\n"
	".hidden ctp_makecontext_entry\n"
	".type ctp_makecontext_entry, @function\n"
	"ctp_makecontext_entry:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined %rip\n"
	"	movq (%rsp), %rbp\n"
	"	leaq 1f(%rip), %rax\n"
	"	movq %rax, (%rsp)\n"
	"	jmpq *%r12\n"
	"1:	movl %r13d, %edi\n"
	"	movq %r14, %rsi\n"
	"	movq %r15, %rdx\n"
	"	call ctp_makecontext_returned\n"
	"	jmpq *%rbp\n"
	"	.cfi_endproc\n"
	".size ctp_makecontext_entry, .-ctp_makecontext_entry\n"
	".globl ctp_makecontext_entry_end\n"
	".hidden ctp_makecontext_entry_end\n"
	"ctp_makecontext_entry_end:\n");

/* getcontext: set when the running coroutine saves its context, cleared when a coroutine is
 * resumed on this thread. A setcontext away from a coroutine that saved itself since it was
 * resumed is a suspend (the getcontext/setcontext scheduler idiom: it will be resumed through the
 * saved context); one that did not has left for good, unless something resumes it after all.
 *
 * A C wrapper of getcontext would break it (its frame is gone when the saved context is resumed):
 * this hook is an assembly stub that sets the flag and jumps to glibc's getcontext with the
 * stack and every register as the program left them. */
__thread uint8_t ctp_context_saved __attribute__((tls_model("initial-exec")));
void *ctp_real_getcontext_resolve(void) CTP_HIDDEN;
static void *real_getcontext_fn;

void *ctp_real_getcontext_resolve(void)
{
	void *f = __atomic_load_n(&real_getcontext_fn, __ATOMIC_RELAXED);
	if (!f) {
		int saved_errno = errno;
		f = dlsym(RTLD_NEXT, "getcontext");
		errno = saved_errno;
		if (!f) {
			ctp_log("no real getcontext: cannot go on", NULL, NULL);
			abort();
		}
		__atomic_store_n(&real_getcontext_fn, f, __ATOMIC_RELAXED);
	}
	return f;
}

__asm__(".text\n"
	".p2align 4\n"
	".globl getcontext\n"
	".type getcontext, @function\n"
	"getcontext:\n"
	"	.cfi_startproc\n"
	"	movq ctp_context_saved@gottpoff(%rip), %rax\n"
	"	movb $1, %fs:(%rax)\n"
	"	movq real_getcontext_fn(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmpq *%rax\n"
	"1:	pushq %rdi\n" /* first call: resolve, with ucp kept and the stack aligned */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ctp_real_getcontext_resolve\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	jmpq *%rax\n"
	"	.cfi_endproc\n"
	".size getcontext, .-getcontext\n");

static inline uint64_t context_sp(const ucontext_t *ucp)
{
	return (uint64_t)ucp->uc_mcontext.gregs[REG_RSP];
}

/* swapcontext and setcontext are entered through stubs (switch_stub.h): the C parts below run on
 * the thread's walk stack and return the real function, which the stub enters with the caller's
 * stack. glibc's own uses next to none of a coroutine's stack. */
void *ctp_swapcontext_enter(ucontext_t *oucp, const ucontext_t *ucp, uint64_t *ret_slot) CTP_HIDDEN;
void *ctp_setcontext_enter(const ucontext_t *ucp, uint64_t *ret_slot) CTP_HIDDEN;

/* clang-format off */
__asm__(CTP_SWITCH_STUB_PROLOGUE("swapcontext")
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	leaq 8(%rbp), %rdx\n" /* ret_slot */
	"	call ctp_swapcontext_enter\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	CTP_SWITCH_STUB_EPILOGUE("swapcontext"));

__asm__(CTP_SWITCH_STUB_PROLOGUE("setcontext")
	"	pushq %rdi\n"
	"	subq $8, %rsp\n"
	"	leaq 8(%rbp), %rsi\n" /* ret_slot */
	"	call ctp_setcontext_enter\n"
	"	addq $8, %rsp\n"
	"	popq %rdi\n"
	CTP_SWITCH_STUB_EPILOGUE("setcontext"));
/* clang-format on */

void *ctp_swapcontext_enter(ucontext_t *oucp, const ucontext_t *ucp, uint64_t *ret_slot)
{
	CTP_REAL(swapcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && ucp) {
		/* errno: nothing on this path changes it (the unwinder keeps it itself). */
		uint64_t now = ctp_now();
		ctp_walk_area_get(t); /* the thread's next switches run there */
		struct ctp_stack_owner target = ctp_stack_owner(t, context_sp(ucp));
		if (target.idx != t->current) {
			/* real_swapcontext saves this coroutine's registers into oucp. */
			struct ctp_suspend_point at = {.call_site = *ret_slot,
						       .ret_slot = (uint64_t)ret_slot,
						       .ctx = (uint64_t)oucp,
						       .ctx_kind = oucp ? CTP_CTX_UCONTEXT
									: CTP_CTX_NONE};
			/* Inline (switch_path.h), with the station the lookup found: the switch
			 * path of ucontext programs, as fcontext_hooks.c has it for Boost's. */
			ctp_switch_from(t, target.idx, target.station, CTP_HOW_SWAPCONTEXT,
					CTP_STATE_SUSPENDED, at, now);
		}
	}
	/* The stub jumps to it; it returns when someone switches back to oucp, maybe on another
	 * thread. The resumer has already updated our station. */
	return (void *)real_swapcontext;
}

/* A setcontext away from a coroutine is a switch, not its end: a coroutine that saved itself
 * with getcontext since it was last resumed is suspended (it will be resumed through what it
 * saved); one that did not has left, which the collector counts as its end unless something
 * resumes it after all (its station stays until then, or until its stack is reused). A
 * setcontext within one stack (a getcontext loop) is no switch. */
void *ctp_setcontext_enter(const ucontext_t *ucp, uint64_t *ret_slot)
{
	CTP_REAL(setcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && ucp) {
		uint64_t now = ctp_now();
		ctp_walk_area_get(t); /* the thread's next switches run there */
		uint32_t to = ctp_station_for_sp(t, context_sp(ucp));
		if (to != t->current) {
			/* Where the coroutine saved itself (getcontext) is not known here: the call
			 * site only. */
			struct ctp_suspend_point at = {.call_site = *ret_slot,
						       .ret_slot = (uint64_t)ret_slot};
			if (ctp_context_saved)
				ctp_coro_switch(t, to, CTP_HOW_SETCONTEXT, &at, now);
			else
				ctp_coro_leave(t, to, CTP_HOW_SETCONTEXT, &at, now);
		}
	}
	return (void *)real_setcontext;
}

void ctp_makecontext_returned(uint32_t idx, uint64_t coro, const ucontext_t *link)
{
	int saved_errno = errno;
	struct ctp_thread *t = ctp_thread_get();
	/* The station must still be this coroutine's: it may have been ended meanwhile (its stack
	 * reused by another makecontext while it ran on). */
	if (t && t->current == idx && CTP_LOAD_RELAXED(&ctp_station_at(idx)->coro) == coro) {
		/* With no uc_link the thread exits; the coroutine ends all the same. */
		uint32_t to = link ? ctp_station_for_sp(t, context_sp(link)) : CTP_NO_STATION;
		ctp_coro_end_and_switch(t, to, CTP_HOW_RETURN);
	}
	errno = saved_errno;
}

/* The trampoline takes the place of the return address glibc's makecontext puts at the top of
 * the new stack (the same in every call): readers of the segment show a frame in it as that
 * address, so that stacks read as the program's own. */
static void note_entry_tramp(const ucontext_t *ucp)
{
	struct ctp_header *h = ctp_seg.hdr;
	if (CTP_LOAD_RELAXED(&h->entry_tramp_untraced))
		return;
	CTP_STORE_RELAXED(&h->entry_tramp_lo, (uint64_t)ctp_makecontext_entry);
	CTP_STORE_RELAXED(&h->entry_tramp_hi, (uint64_t)ctp_makecontext_entry_end);
	CTP_STORE_RELEASE(&h->entry_tramp_untraced,
			  *(const uint64_t *)ucp->uc_mcontext.gregs[REG_RSP]);
}

CTP_EXPORT void makecontext(ucontext_t *ucp, void (*fn)(void), int argc, ...)
{
	CTP_REAL(makecontext);
	int saved_errno = errno;
	uint64_t reg_args[3] = {0, 0, 0};
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc && i < 3; i++)
		reg_args[i] = va_arg(ap, uint64_t);
	/* The SysV ABI passes the rest on the caller's stack, where the va_list points. */
	const uint64_t *stack_args = ap[0].overflow_arg_area;
	ctp_makecontext_forward((void *)real_makecontext, ucp, fn, argc, reg_args, stack_args);
	va_end(ap);

	struct ctp_thread *t = ctp_thread_get();
	uint64_t lo = (uint64_t)ucp->uc_stack.ss_sp;
	uint64_t hi = lo + ucp->uc_stack.ss_size;
	uint64_t coro = t ? ctp_coro_new_id() : 0;
	uint32_t idx = t ? ctp_coro_make(t, coro, CTP_KIND_UCONTEXT, (uint64_t)fn, lo, hi,
					 context_sp(ucp), CTP_CREATED_HERE())
			 : CTP_NO_STATION;
	if (idx == CTP_NO_STATION) {
		errno = saved_errno;
		return;
	}

	note_entry_tramp(ucp);
	greg_t *r = ucp->uc_mcontext.gregs;
	r[REG_R12] = (greg_t)fn;
	r[REG_R13] = (greg_t)idx;
	r[REG_R14] = (greg_t)coro;
	r[REG_R15] = (greg_t)ucp->uc_link;
	r[REG_RIP] = (greg_t)ctp_makecontext_entry;
	errno = saved_errno;
}

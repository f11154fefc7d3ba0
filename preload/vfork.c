/* vfork: the child runs in the parent's memory, on the parent's stack and with the parent's TLS,
 * until it calls exec or _exit; the parent waits meanwhile. Whatever the preload would write in
 * the child would be the parent's (its rings, stations, fd table, exit status), and whatever it
 * allocated would stay in the parent for good. So while a vfork child runs, the thread is marked
 * busy and `in_vfork_child`: every hook passes through, and the exec hooks build the child's
 * environment on the stack, not in new pages.
 *
 * The hook cannot be C: a vfork child that returns from a C wrapper and then runs on would
 * overwrite the wrapper's frame that the parent returns through. Like glibc's own vfork, this
 * one keeps its return address in a register across the syscall. */
#include <errno.h>
#include <sys/syscall.h>

#include "preload/compiler.h"
#include "preload/connection.h"
#include "preload/threads.h"

#define STRINGIFY_VALUE(x) #x
#define STRINGIFY(x) STRINGIFY_VALUE(x)

void ctp_vfork_enter(void) CTP_HIDDEN;
long ctp_vfork_leave(long rc) CTP_HIDDEN;

void ctp_vfork_enter(void)
{
	struct ctp_thread *t = &ctp_tls_thread;
	t->vfork_saved_state = t->state;
	if (t->state == CTP_THREAD_TRACING)
		t->state = CTP_THREAD_BUSY;
	__atomic_store_n(&t->in_vfork_child, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* In the parent, after the child has gone (exec or exit), or when vfork failed. Returns what
 * vfork returns, errno set on failure. */
long ctp_vfork_leave(long rc)
{
	struct ctp_thread *t = &ctp_tls_thread;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->in_vfork_child, 0, __ATOMIC_RELAXED);
	t->state = t->vfork_saved_state;
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	ctp_connection_send_spawned((int)rc);
	return rc;
}

/* The return address goes to rdi (the child may overwrite the stack slot before the parent
 * resumes); both sides push it back. The child returns 0 at once; the parent calls
 * ctp_vfork_leave first. */
__asm__(".text\n"
	".p2align 4\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call ctp_vfork_enter\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	movl $" STRINGIFY(SYS_vfork) ", %eax\n"
					     "	syscall\n"
					     "	pushq %rdi\n"
					     "	.cfi_adjust_cfa_offset 8\n"
					     "	.cfi_rel_offset %rip, 0\n"
					     "	testq %rax, %rax\n"
					     "	jz 1f\n"
					     "	subq $8, %rsp\n"
					     "	.cfi_adjust_cfa_offset 8\n"
					     "	movq %rax, %rdi\n"
					     "	call ctp_vfork_leave\n"
					     "	addq $8, %rsp\n"
					     "	.cfi_adjust_cfa_offset -8\n"
					     "1:	ret\n"
					     "	.cfi_endproc\n"
					     ".size vfork, .-vfork\n");

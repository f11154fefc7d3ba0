/* A walk (libunwind's unw_backtrace) needs 3 to 7 KB of stack. Run on the coroutine it walks,
 * it wrote that deep into the coroutine's stack, where the program itself often never goes: the
 * first walk of each coroutine (its first suspend at a call site) touched one more page of
 * every small stack, about 0.2 pages per fiber in a Boost.Fiber program with 16 KiB stacks, and
 * it needed that much room left (no walk on a stack with less). So walks run on a stack of the
 * thread's own, mapped on a thread's first walk or switch (threads that never switch a
 * coroutine never map one) and given back when the thread exits. A PROT_NONE page below it turns an
 * overflow (a deep signal handler that interrupts a walk) into a fault instead of a silent
 * overwrite. The tracer's whole part of a switch runs there too (switch_stub.h): its ~250 bytes
 * of frames below the program's own cost a coroutine on a small malloc'd stack as many bytes of
 * memory. */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/walk_stack.h"

_Static_assert(sizeof(struct ctp_walk_area) % 16 == 0, "the stack below it stays 16-aligned");

/* Called from the program's switches: errno is the program's, also when a call fails. */
struct ctp_walk_area *ctp_walk_area_map(struct ctp_thread *t)
{
	int saved_errno = errno;
	uint8_t *map = mmap(NULL, CTP_WALK_MAP_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	/* The system call itself, not the exported mprotect: the preload's hook keeps the
	 * program's last guard for the coroutine made above it (stack_release.c), and this one,
	 * made at a thread's first make or switch, would take its place. */
	if (map != MAP_FAILED && syscall(SYS_mprotect, map, CTP_WALK_GUARD_BYTES, PROT_NONE) != 0) {
		munmap(map, CTP_WALK_MAP_BYTES); /* the preload's hook passes it through */
		map = MAP_FAILED;
	}
	errno = saved_errno;
	if (map == MAP_FAILED)
		return NULL;
	struct ctp_walk_area *area = (struct ctp_walk_area *)(map + CTP_WALK_TOP_OFFSET);
	for (uint32_t i = 0; i < CTP_LOOKUP_SETS; i++)
		area->lookup[i][0].page = area->lookup[i][1].page = UINT64_MAX;
	t->lookup = area->lookup;
	t->walk_top = (uint8_t *)area; /* the stack grows down from right below the area */
	return area;
}

void ctp_walk_area_release(struct ctp_thread *t)
{
	uint8_t *top = t->walk_top;
	if (!top)
		return;
	t->walk_top = NULL; /* no switch of this thread runs there any more */
	t->lookup = (struct ctp_lookup_hint(*)[2])ctp_no_lookup_hints;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	munmap(top - CTP_WALK_TOP_OFFSET, CTP_WALK_MAP_BYTES);
}

/* rdi = arg, rsi = fn, rdx = the area: the new stack pointer, 16-aligned, so that fn is entered
 * as after a call. rbp keeps the caller's frame: CFA = rbp + 16 throughout. */
__asm__(".text\n"
	".p2align 4\n"
	".globl ctp_on_walk_stack\n"
	".hidden ctp_on_walk_stack\n"
	".type ctp_on_walk_stack, @function\n"
	"ctp_on_walk_stack:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbp, 0\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	movq %rdx, %rsp\n"
	"	callq *%rsi\n"
	"	movq %rbp, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	popq %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size ctp_on_walk_stack, .-ctp_on_walk_stack\n");

/* The shared unwinder (ctp/stackwalk.h): registers read from both kinds of saved context through
 * a memory callback, and a walk of a real suspended coroutine of this very process, read with
 * process_vm_readv as the collector reads a traced one: it must start in the function that
 * suspended and go on into the one that called it, and it must refuse bounds that do not hold
 * the saved stack pointer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctp/segment.h"
#include "ctp/stackwalk.h"

/* Memory of a fake process: one buffer at a fake address. */
struct fake_mem {
	uint64_t base;
	const void *bytes;
	size_t len;
};

static bool fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct fake_mem *m = arg;
	if (addr < m->base || addr - m->base > m->len || len > m->len - (addr - m->base))
		return false;
	memcpy(buf, (const char *)m->bytes + (addr - m->base), len);
	return true;
}

static void fcontext_frame_gives_its_registers(void **state)
{
	(void)state;
	/* Boost's frame: control words, r12, r13, r14, r15, rbx, rbp, return address. */
	uint64_t frame[8] = {0x1f80, 12, 13, 14, 15, 3, 6, 0x401234};
	struct fake_mem m = {.base = 0x7000, .bytes = frame, .len = sizeof(frame)};
	struct ctp_regs r;
	assert_true(ctp_regs_from_context(fake_read, &m, CTP_CTX_FCONTEXT, 0x7000, &r));
	assert_int_equal(r.r12, 12);
	assert_int_equal(r.r15, 15);
	assert_int_equal(r.rbx, 3);
	assert_int_equal(r.rbp, 6);
	assert_int_equal(r.rip, 0x401234);
	assert_int_equal(r.rsp, 0x7040);
	/* Cut short: refused, not read past the end. */
	assert_false(ctp_regs_from_context(fake_read, &m, CTP_CTX_FCONTEXT, 0x7008, &r));
	assert_false(ctp_regs_from_context(fake_read, &m, CTP_CTX_NONE, 0x7000, &r));
}

static void simgrid_raw_frame_gives_its_registers(void **state)
{
	(void)state;
	/* raw_swapcontext's pushes, last first: r15, r14, r13, r12, rbx, rbp, r9, r8, rcx, rdx,
	 * rsi, rdi, then the return address. */
	uint64_t frame[13] = {15, 14, 13, 12, 3, 6, 9, 8, 1, 2, 4, 5, 0x405678};
	struct fake_mem m = {.base = 0x9000, .bytes = frame, .len = sizeof(frame)};
	struct ctp_regs r;
	assert_true(ctp_regs_from_context(fake_read, &m, CTP_CTX_SIMGRID_RAW, 0x9000, &r));
	assert_int_equal(r.r12, 12);
	assert_int_equal(r.r13, 13);
	assert_int_equal(r.r14, 14);
	assert_int_equal(r.r15, 15);
	assert_int_equal(r.rbx, 3);
	assert_int_equal(r.rbp, 6);
	assert_int_equal(r.rip, 0x405678);
	assert_int_equal(r.rsp, 0x9068);
	assert_false(ctp_regs_from_context(fake_read, &m, CTP_CTX_SIMGRID_RAW, 0x9008, &r));
}

enum { STACK = 64 * 1024 };
static ucontext_t main_ctx, co_ctx;
static char co_stack[STACK] __attribute__((aligned(16)));

__attribute__((noinline)) static void suspend_here(void)
{
	swapcontext(&co_ctx, &main_ctx);
	__asm__ volatile(""); /* no tail call: this frame stays */
}

__attribute__((noinline)) static void coroutine_body(void)
{
	suspend_here();
	__asm__ volatile("");
}

static bool in_function(uint64_t pc, void (*fn)(void))
{
	return pc > (uint64_t)fn && pc < (uint64_t)fn + 1024; /* instrumented builds are bigger */
}

static void walks_a_suspended_coroutine_of_a_live_process(void **state)
{
	(void)state;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine_body, 0);
	swapcontext(&main_ctx, &co_ctx); /* it is now suspended in suspend_here */

	void *pid = (void *)(uintptr_t)getpid();
	struct ctp_regs r;
	assert_true(ctp_regs_from_context(ctp_read_pid_memory, pid, CTP_CTX_UCONTEXT,
					  (uint64_t)&co_ctx, &r));
	struct ctp_stackwalk *w =
		ctp_stackwalk_open_pid((uint32_t)getpid(), ctp_read_pid_memory, pid);
	assert_non_null(w);
	uint64_t lo = (uint64_t)co_stack, hi = lo + sizeof(co_stack);
	uint64_t pcs[16];
	uint32_t n = ctp_stackwalk_run(w, &r, lo, hi, 0, pcs, 16);
	/* The first frame is suspend_here, or (under ASan, which intercepts swapcontext) one
	 * frame of the interceptor above it. */
	uint32_t i = 0;
	while (i < 2 && i < n && !in_function(pcs[i], suspend_here))
		i++;
	assert_true(i + 1 < n);
	assert_true(in_function(pcs[i], suspend_here));
	assert_true(in_function(pcs[i + 1], coroutine_body));
	/* From the call site on: the same frames, without those above it. */
	uint64_t from_site[16];
	assert_int_equal(ctp_stackwalk_run(w, &r, lo, hi, pcs[i], from_site, 16), n - i);
	assert_memory_equal(pcs + i, from_site, (n - i) * sizeof(*pcs));
	/* A call site that is not there: nothing. Bounds without the stack pointer: nothing. */
	assert_int_equal(ctp_stackwalk_run(w, &r, lo, hi, 0x10, from_site, 16), 0);
	assert_int_equal(ctp_stackwalk_run(w, &r, hi, hi + 4096, 0, from_site, 16), 0);
	ctp_stackwalk_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fcontext_frame_gives_its_registers),
		cmocka_unit_test(simgrid_raw_frame_gives_its_registers),
		cmocka_unit_test(walks_a_suspended_coroutine_of_a_live_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

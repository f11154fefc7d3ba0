/* The whole stack of a suspended coroutine, unwound from its saved context, in the process, off
 * the switch path. By default a switch records only its call site; the collector unwinds the
 * stacks of coroutines that stay suspended by reading the process's memory (ctp/stackwalk.h).
 * That memory is gone once the process has ended, so at exit the process unwinds here every
 * coroutine still suspended, into its station, where the collector finds it with the final
 * state (stack_kind CTP_STACK_DEFERRED). The same pass covers a collector that may not read the
 * process's memory (Yama, containers).
 *
 * Safety: the saved context and the stack are the program's memory, which may have been freed
 * or unmapped under a suspended coroutine. The context is copied with process_vm_readv (a fault
 * there is an error, not a signal), and the walk runs only when the saved stack pointer lies in
 * the coroutine's known stack and that whole stack is still mapped. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/saved_frame.h"
#include "ctp/segment.h"
#include "preload/process.h"
#include "preload/stations.h"
#include "preload/threads.h"
#include "preload/unwind.h"

typedef int (*init_local_fn)(unw_cursor_t *, unw_context_t *);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

struct walker {
	init_local_fn init_local;
	step_fn step;
	get_reg_fn get_reg;
	pid_t pid;
};

/* Frames of the preload's own above a swapcontext's call site (the hook). */
enum { OWN_FRAMES_MAX = 8 };
/* A bound on the work at exit (a few microseconds a walk): past it, coroutines keep their call
 * site. */
enum { MAX_WALKS_AT_EXIT = 4096 };

/* In a fork child: the coroutines it inherited suspended are the parent's (its copies of their
 * stations); walking them at every child's exit would slow a forking server down for nothing
 * the child did. Only those suspended since the fork are walked. */
static uint64_t suspended_since;

void ctp_unwind_saved_fork_child(void)
{
	suspended_since = ctp_now();
}

static bool read_own(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)addr, .iov_len = len};
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Registers of a saved context (enum ctp_ctx_kind), as libunwind starts from them. */
static bool context_of(pid_t pid, uint32_t kind, uint64_t ctx, ucontext_t *uc)
{
	memset(uc, 0, sizeof(*uc));
	if (kind == CTP_CTX_UCONTEXT)
		return read_own(pid, ctx + offsetof(ucontext_t, uc_mcontext.gregs),
				uc->uc_mcontext.gregs, sizeof(uc->uc_mcontext.gregs));
	const struct ctp_saved_frame *f = ctp_saved_frame_of(kind);
	if (!f)
		return false;
	uint64_t w[CTP_SAVED_FRAME_MAX_WORDS];
	if (!read_own(pid, ctx, w, 8u * f->words))
		return false;
	greg_t *g = uc->uc_mcontext.gregs;
	g[REG_R12] = (greg_t)w[f->r12];
	g[REG_R13] = (greg_t)w[f->r13];
	g[REG_R14] = (greg_t)w[f->r14];
	g[REG_R15] = (greg_t)w[f->r15];
	g[REG_RBX] = (greg_t)w[f->rbx];
	g[REG_RBP] = (greg_t)w[f->rbp];
	g[REG_RIP] = (greg_t)w[f->rip];
	g[REG_RSP] = (greg_t)(ctx + 8u * f->words);
	return true;
}

static bool stack_mapped(uint64_t sp, uint64_t lo, uint64_t hi)
{
	if (sp < lo || sp >= hi)
		return false;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = sp & ~(page - 1);
	/* msync fails with ENOMEM where any page of the range is unmapped. */
	return msync((void *)from, hi - from, MS_ASYNC) == 0;
}

/* Unwinds one saved context into frames, from the frame at call_site on. */
static uint32_t walk_saved(const struct walker *w, uint32_t kind, uint64_t ctx, uint64_t lo,
			   uint64_t hi, uint64_t call_site, uint64_t *frames, uint32_t max)
{
	ucontext_t uc;
	if (!context_of(w->pid, kind, ctx, &uc) ||
	    !stack_mapped((uint64_t)uc.uc_mcontext.gregs[REG_RSP], lo, hi))
		return 0;
	unw_cursor_t cursor;
	if (w->init_local(&cursor, &uc) < 0)
		return 0;
	uint32_t n = 0;
	bool found = false;
	for (uint32_t i = 0; i < max + OWN_FRAMES_MAX && n < max; i++) {
		unw_word_t ip = 0;
		if (w->get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		found |= ip == call_site;
		if (found)
			frames[n++] = ip;
		else if (i >= OWN_FRAMES_MAX)
			break;
		if (w->step(&cursor) <= 0)
			break;
	}
	return found ? n : 0;
}

struct exit_pass {
	struct walker w;
	uint32_t depth;
	uint32_t walks;
};

/* Writes a stack into a station this thread does not run: the seqlock is taken with a
 * compare-and-swap, and the stack is kept only if the coroutine is still suspended where it was
 * walked. */
static void store_deferred(struct ctp_station *s, uint64_t switches, const uint64_t *frames,
			   uint32_t n)
{
	uint32_t seq = CTP_LOAD_RELAXED(&s->seq);
	if ((seq & 1) || !__atomic_compare_exchange_n(&s->seq, &seq, seq + 1, false,
						      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	CTP_FENCE_RELEASE();
	if (CTP_LOAD_RELAXED(&s->state) == CTP_STATE_SUSPENDED &&
	    CTP_LOAD_RELAXED(&s->switches) == switches &&
	    CTP_LOAD_RELAXED(&s->stack_kind) == CTP_STACK_CALL_SITE) {
		for (uint32_t i = 0; i < n; i++)
			CTP_STORE_RELAXED(&s->frames[i], frames[i]);
		CTP_STORE_RELAXED(&s->stack_len, n);
		CTP_STORE_RELAXED(&s->stack_kind, CTP_STACK_DEFERRED);
	}
	CTP_STORE_RELEASE(&s->seq, seq + 2);
}

static void unwind_one(uint32_t idx, struct ctp_station *s, void *arg)
{
	(void)idx;
	struct exit_pass *x = arg;
	if (CTP_LOAD_ACQUIRE(&s->seq) & 1 || CTP_LOAD_RELAXED(&s->state) != CTP_STATE_SUSPENDED ||
	    CTP_LOAD_RELAXED(&s->stack_kind) != CTP_STACK_CALL_SITE ||
	    CTP_LOAD_RELAXED(&s->stack_len) == 0 || x->walks >= MAX_WALKS_AT_EXIT ||
	    CTP_LOAD_RELAXED(&s->last_switch) < suspended_since)
		return;
	uint64_t switches = CTP_LOAD_RELAXED(&s->switches);
	uint32_t kind = CTP_LOAD_RELAXED(&s->ctx_kind);
	uint64_t ctx = CTP_LOAD_RELAXED(&s->saved_ctx);
	uint64_t lo = CTP_LOAD_RELAXED(&s->stack_lo), hi = CTP_LOAD_RELAXED(&s->stack_hi);
	uint64_t call_site = CTP_LOAD_RELAXED(&s->frames[0]);
	if (kind == CTP_CTX_NONE || CTP_LOAD_RELAXED(&s->switches) != switches)
		return;
	x->walks++;
	uint64_t frames[CTP_MAX_STACK_DEPTH];
	uint32_t n = walk_saved(&x->w, kind, ctx, lo, hi, call_site, frames, x->depth);
	if (n > 1)
		store_deferred(s, switches, frames, n);
}

void ctp_unwind_suspended_at_exit(void)
{
	static int done;
	if (ctp_proc.config.stack_depth == 0 || ctp_proc.config.stacks_every_switch ||
	    __atomic_exchange_n(&done, 1, __ATOMIC_RELAXED) || !ctp_unwind_room())
		return;
	struct exit_pass x = {
		.w = {.init_local = (init_local_fn)ctp_unwind_symbol("_ULx86_64_init_local"),
		      .step = (step_fn)ctp_unwind_symbol("_ULx86_64_step"),
		      .get_reg = (get_reg_fn)ctp_unwind_symbol("_ULx86_64_get_reg"),
		      .pid = getpid()},
		.depth = ctp_proc.config.stack_depth,
	};
	if (!x.w.init_local || !x.w.step || !x.w.get_reg)
		return;
	int saved_errno = errno;
	if (ctp_unwind_walk_begin()) {
		ctp_stations_each(unwind_one, &x);
		ctp_unwind_walk_end();
	}
	errno = saved_errno;
}

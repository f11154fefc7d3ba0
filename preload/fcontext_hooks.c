/* Boost.Context: jump_fcontext, ontop_fcontext and make_fcontext, exported by
 * libboost_context.so and reached through the PLT by Boost.Coroutine2, Boost.Fiber, Asio spawn
 * and programs of their own (nothing inside the library calls them, so every call can be
 * interposed; Boost.Fiber switches mostly with ontop_fcontext). An fcontext is the saved stack
 * pointer of the suspended side and changes on every switch, so a target is known by the stack it
 * points into: each make_fcontext registers its stack in the stack map.
 *
 * Ends: Boost ends a fiber (and a callcc continuation) with ontop_fcontext(to, record,
 * fiber_exit) from the dying context, where `record` is the data it was handed on its very first
 * resume, and fiber_exit frees the stack and returns a null fctx. A null fctx alone proves
 * nothing: Boost.Fiber switches with resume_with, whose function also returns an empty fiber
 * while the context it left lives on (kept in its scheduler). So a coroutine ends when it makes
 * an ontop switch with its start data and the function then returns a null fctx. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>

#include "ctp/atomics.h"
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

/* boost::context::detail::transfer_t: two pointers, returned in rax:rdx under the SysV ABI. */
struct fcontext_transfer {
	void *fctx;
	void *data;
};
typedef struct fcontext_transfer (*fcontext_ontop_fn)(struct fcontext_transfer);

CTP_EXPORT struct fcontext_transfer jump_fcontext(void *to, void *vp);
CTP_EXPORT struct fcontext_transfer ontop_fcontext(void *to, void *vp, fcontext_ontop_fn fn);
CTP_EXPORT void *make_fcontext(void *sp, size_t size, void (*fn)(struct fcontext_transfer));

/* The coroutine's last switch, from the ontop hook to the ontop function that runs on the
 * target side: both run on this thread, one right after the other. */
struct pending_end {
	fcontext_ontop_fn fn;
	uint32_t to;
};
static __thread struct pending_end pending_end __attribute__((tls_model("initial-exec")));

/* jump_fcontext and ontop_fcontext are entered through assembly stubs that call the C part
 * below with `ret_slot`, the address of the caller's return address, and then jump to the real
 * function with the stack and argument registers exactly as the caller left them. So the real
 * function saves the suspended side's registers right below ret_slot: its fcontext is
 * ret_slot - FCONTEXT_FRAME (Boost 1.61+ on x86-64 SysV: 8 bytes of MXCSR/x87 control word, r12,
 * r13, r14, r15, rbx, rbp, then the return address; read from libboost_context's code). The
 * station keeps that address, from which the coroutine's stack is unwound later if it stays
 * suspended (CTP_CTX_FCONTEXT), and the return address is the switch's call site. */
enum { FCONTEXT_FRAME = 0x38 };

void *ctp_jump_fcontext_enter(void *to, void *vp, uint64_t *ret_slot) CTP_HIDDEN;
void *ctp_ontop_fcontext_enter(void *to, void *vp, fcontext_ontop_fn *fn_slot,
			       uint64_t *ret_slot) CTP_HIDDEN;

/* clang-format off */
__asm__(CTP_SWITCH_STUB_PROLOGUE("jump_fcontext")
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	leaq 8(%rbp), %rdx\n" /* ret_slot */
	"	call ctp_jump_fcontext_enter\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	CTP_SWITCH_STUB_EPILOGUE("jump_fcontext"));

/* The function pointer gets a slot of its own, which the C part may rewrite. */
__asm__(CTP_SWITCH_STUB_PROLOGUE("ontop_fcontext")
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	subq $8, %rsp\n"
	"	leaq 8(%rsp), %rdx\n" /* fn_slot */
	"	leaq 8(%rbp), %rcx\n" /* ret_slot */
	"	call ctp_ontop_fcontext_enter\n"
	"	addq $8, %rsp\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	CTP_SWITCH_STUB_EPILOGUE("ontop_fcontext"));
/* clang-format on */

#ifdef CTP_SWITCH_FLOOR
/* The least a traced switch can cost, for scripts/bench: libctp_preload_switch_floor.so (built
 * for the bench, never installed) records each jump_fcontext and ontop_fcontext with its time
 * and call site, as every switch of the history needs, and does nothing else: no lookup, no
 * station, no stack, no end. Its trace names no coroutine; what it measures is what a program
 * pays for one timestamped record a switch written into a ring another core reads. */
static inline __attribute__((always_inline)) void switch_floor(struct ctp_thread *t, uint32_t how,
							       const uint64_t *ret_slot)
{
	uint64_t now = ctp_now();
	uint64_t site = *ret_slot;
	ctp_emit_switch_record(t, now, 0, 0, how, UINT32_MAX, 0, &site, 1);
}
#endif

/* Records a switch from the current coroutine of t to the context whose stack pointer is `to`. */
static inline __attribute__((always_inline)) void
switch_to(struct ctp_thread *t, void *to, void *vp, uint32_t how, const uint64_t *ret_slot)
{
	uint64_t now = ctp_now();
	ctp_walk_area_get(t); /* the thread's next switches run there */
	struct ctp_stack_owner target = ctp_stack_owner(t, (uint64_t)to);
	uint32_t idx = target.idx;
	if (idx == t->current)
		return;
	struct ctp_station *s = target.station;
	if (CTP_UNLIKELY(CTP_LOAD_RELAXED(&s->state) == CTP_STATE_CREATED)) {
		/* First resume: Boost hands the context its record, which it hands back on its
		 * last switch. */
		struct ctp_coro_private *p = ctp_station_private(idx);
		if (p)
			p->start_data = vp;
	}
	struct ctp_suspend_point at = {.call_site = *ret_slot,
				       .ret_slot = (uint64_t)ret_slot,
				       .ctx = (uint64_t)ret_slot - FCONTEXT_FRAME,
				       .ctx_kind = CTP_CTX_FCONTEXT};
	/* Inline (switch_path.h): this is the hot path of Boost programs. */
	ctp_switch_from(t, idx, s, how, CTP_STATE_SUSPENDED, at, now);
}

/* The real functions, looked up per caller (CTP_REAL_FOR_CALLER): in the global scope, or in
 * the calling library's own when Boost.Context was loaded with it RTLD_LOCAL (real_lookup.c). */
static struct ctp_real_cache real_jump, real_ontop, real_make;

/* Where a context function returns to: the exit path that make_fcontext builds into every new
 * context (it calls _exit). A jump whose return address is that path comes from a context
 * function's very last frame, one that jumped away for good with a tail call (pdns-recursor's
 * MTasker ends its coroutines so): the context can never run again. Known per library that
 * holds a make_fcontext, as the range of that symbol (its ELF size). */
struct exit_path {
	uintptr_t lo, hi;
};
enum { MAX_EXIT_PATHS = CTP_REAL_LOCAL_MAX + 1 };
static struct exit_path exit_paths[MAX_EXIT_PATHS];
static uint32_t exit_path_count;
/* From the lowest start to the highest end of them all, empty until one is noted: every jump
 * asks whether it leaves for good, and one range check answers most (a loop over the paths cost
 * 11 instructions per switch with one path). Read relaxed: a context can jump only after the
 * make_fcontext that noted its path returned, which the program ordered before. */
static struct exit_path exit_span = {UINTPTR_MAX, 0};
static int exit_path_lock;

static void note_exit_path(void *make)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	uint64_t size = 0;
	if (make && dladdr1(make, &info, (void **)&sym, RTLD_DL_SYMENT) && sym)
		size = sym->st_size;
	if (size == 0) {
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			ctp_log("make_fcontext has no symbol size: the ends of coroutines that "
				"leave "
				"with a tail jump (pdns-recursor) are not seen",
				NULL, NULL);
	}
	if (__atomic_exchange_n(&exit_path_lock, 1, __ATOMIC_ACQUIRE))
		return; /* another thread notes one: this one tries again at its next make_fcontext
			 */
	uint32_t n = exit_path_count;
	bool known = false;
	for (uint32_t i = 0; i < n; i++)
		known |= exit_paths[i].lo == (uintptr_t)make;
	if (!known && n < MAX_EXIT_PATHS) {
		/* With no size, an empty range: known, and never matching. */
		exit_paths[n] = (struct exit_path){(uintptr_t)make, (uintptr_t)make + size};
		__atomic_store_n(&exit_path_count, n + 1, __ATOMIC_RELEASE);
		if (size && (uintptr_t)make < exit_span.lo)
			__atomic_store_n(&exit_span.lo, (uintptr_t)make, __ATOMIC_RELAXED);
		if (size && (uintptr_t)make + size > exit_span.hi)
			__atomic_store_n(&exit_span.hi, (uintptr_t)make + size, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&exit_path_lock, 0, __ATOMIC_RELEASE);
}

static bool leaves_for_good_known(void *make)
{
	uint32_t n = __atomic_load_n(&exit_path_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (exit_paths[i].lo == (uintptr_t)make)
			return true;
	return false;
}

static bool leaves_for_good(void *return_address)
{
	uintptr_t r = (uintptr_t)return_address;
	if (r <= __atomic_load_n(&exit_span.lo, __ATOMIC_RELAXED) ||
	    r >= __atomic_load_n(&exit_span.hi, __ATOMIC_RELAXED))
		return false;
	uint32_t n = __atomic_load_n(&exit_path_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (r > exit_paths[i].lo && r < exit_paths[i].hi)
			return true;
	return false;
}

void *ctp_jump_fcontext_enter(void *to, void *vp, uint64_t *ret_slot)
{
	void *caller = (void *)*ret_slot;
	__typeof__(jump_fcontext) *real_jump_fcontext =
		CTP_REAL_FOR_CALLER(real_jump, jump_fcontext, caller);
	struct ctp_thread *t = ctp_thread_get();
#ifdef CTP_SWITCH_FLOOR
	if (t && to) {
		switch_floor(t, CTP_HOW_JUMP_FCONTEXT, ret_slot);
		return (void *)real_jump_fcontext;
	}
#endif
	if (t && to) {
		if (CTP_UNLIKELY(leaves_for_good(caller))) {
			uint32_t idx = ctp_station_for_sp(t, (uint64_t)to);
			if (idx != t->current)
				ctp_coro_end_and_switch(t, idx, CTP_HOW_JUMP_FCONTEXT);
		} else {
			switch_to(t, to, vp, CTP_HOW_JUMP_FCONTEXT, ret_slot);
		}
	}
	/* The stub jumps to it; it returns when someone switches back to us, maybe on another
	 * thread. The resumer has already updated our station. */
	return (void *)real_jump_fcontext;
}

/* Runs on the target side in place of the ontop function of a coroutine's last switch. */
static struct fcontext_transfer end_trampoline(struct fcontext_transfer from)
{
	struct pending_end e = pending_end;
	struct fcontext_transfer r = e.fn(from);
	struct ctp_thread *t = ctp_thread_get();
	if (!t)
		return r;
	if (r.fctx == NULL)
		ctp_coro_end_and_switch(t, e.to, CTP_HOW_ONTOP_FCONTEXT);
	else
		/* Not an end after all: the context that left lives on. Its stack is out of
		 * reach from here. */
		ctp_coro_switch_nostack(t, e.to, CTP_HOW_ONTOP_FCONTEXT);
	return r;
}

/* Whether an ontop switch from the current coroutine with data vp is Boost's last switch. */
static inline bool is_last_switch(struct ctp_thread *t, void *vp)
{
	if (!vp)
		return false; /* a fiber being unwound (fiber_unwind), or a plain ontop call */
	struct ctp_station *s = ctp_station_at(t->current);
	if (CTP_LOAD_RELAXED(&s->kind) != CTP_KIND_FCONTEXT)
		return false;
	struct ctp_coro_private *p = ctp_station_private(t->current);
	return p && p->start_data == vp;
}

void *ctp_ontop_fcontext_enter(void *to, void *vp, fcontext_ontop_fn *fn_slot, uint64_t *ret_slot)
{
	fcontext_ontop_fn fn = *fn_slot;
	__typeof__(ontop_fcontext) *real_ontop_fcontext =
		CTP_REAL_FOR_CALLER(real_ontop, ontop_fcontext, (void *)*ret_slot);
	struct ctp_thread *t = ctp_thread_get();
#ifdef CTP_SWITCH_FLOOR
	if (t && to && fn) {
		switch_floor(t, CTP_HOW_ONTOP_FCONTEXT, ret_slot);
		return (void *)real_ontop_fcontext;
	}
#endif
	if (t && to && fn) {
		if (CTP_UNLIKELY(is_last_switch(t, vp))) {
			uint32_t idx = ctp_station_for_sp(t, (uint64_t)to);
			if (idx != t->current) {
				/* Recorded once fn has returned: only then is the end known. */
				pending_end = (struct pending_end){.fn = fn, .to = idx};
				*fn_slot = end_trampoline;
				return (void *)real_ontop_fcontext;
			}
		}
		switch_to(t, to, vp, CTP_HOW_ONTOP_FCONTEXT, ret_slot);
	}
	return (void *)real_ontop_fcontext;
}

CTP_EXPORT void *make_fcontext(void *sp, size_t size, void (*fn)(struct fcontext_transfer))
{
	__typeof__(make_fcontext) *real_make_fcontext =
		CTP_REAL_FOR_CALLER(real_make, make_fcontext, __builtin_return_address(0));
	void *ctx = real_make_fcontext(sp, size, fn);
	struct ctp_thread *t = ctp_thread_get();
	if (!t || !ctx || size == 0)
		return ctx;
	int saved_errno = errno;
	if (CTP_UNLIKELY(!leaves_for_good_known(real_make_fcontext)))
		note_exit_path((void *)real_make_fcontext);
	uint64_t hi = (uint64_t)sp, lo = hi - size;
	uint32_t idx = ctp_coro_make(t, ctp_coro_new_id(), CTP_KIND_FCONTEXT, (uint64_t)fn, lo, hi,
				     (uint64_t)ctx, CTP_CREATED_HERE());
	/* Its first resume hands it its start data (switch_to): none yet. */
	struct ctp_coro_private *p = idx != CTP_NO_STATION ? ctp_station_private(idx) : NULL;
	if (p)
		p->start_data = NULL;
	errno = saved_errno;
	return ctx;
}

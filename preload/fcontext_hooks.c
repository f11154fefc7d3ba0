/* Boost.Context: jump_fcontext, ontop_fcontext and make_fcontext, exported by
 * libboost_context.so and reached through the PLT by Boost.Coroutine2, Boost.Fiber, Asio spawn
 * and programs of their own (see FACTS). An fcontext is the saved stack pointer of the suspended
 * side and changes on every switch, so a target is known by the stack it points into: each
 * make_fcontext registers its stack in the stack map.
 *
 * Ends: Boost ends a fiber (and a callcc continuation) with ontop_fcontext(to, record,
 * fiber_exit) from the dying context, where `record` is the data it was handed on its very first
 * resume, and fiber_exit frees the stack and returns a null fctx. A null fctx alone proves
 * nothing: Boost.Fiber switches with resume_with, whose function also returns an empty fiber
 * while the context it left lives on (kept in its scheduler). So a coroutine ends when it makes
 * an ontop switch with its start data and the function then returns a null fctx. */
#include <stddef.h>

#include "ctp/station.h"
#include "preload.h"
#include "real.h"

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

/* Records a switch from the current coroutine of t to the context whose stack pointer is `to`.
 * Always inlined, so that the unwinder skips exactly one frame of ours, the hook's. */
static inline __attribute__((always_inline)) void switch_to(struct ctp_thread *t, void *to,
							    void *vp, uint32_t how)
{
	uint64_t now = ctp_now();
	uint32_t idx = ctp_station_for_sp(t, (uint64_t)to);
	if (idx == t->current)
		return;
	struct ctp_station *s = ctp_station_at(idx);
	if (CTP_UNLIKELY(CTP_LOAD_RELAXED(&s->state) == CTP_STATE_CREATED)) {
		/* First resume: Boost hands the context its record, which it hands back on its
		 * last switch. */
		struct ctp_coro_private *p = ctp_station_private(idx);
		if (p)
			p->start_data = vp;
	}
	ctp_coro_switch(t, idx, how, 1, now);
}

/* Whether a jump comes from a context function's very last frame: one that jumped away for
 * good with a tail call (pdns-recursor's MTasker ends its coroutines so). Such a frame returns
 * into make_fcontext's own exit path, which calls _exit; the context can never run again. */
static bool leaves_for_good(void *return_address)
{
	static uintptr_t make_fcontext_addr;
	uintptr_t make = __atomic_load_n(&make_fcontext_addr, __ATOMIC_RELAXED);
	if (CTP_UNLIKELY(make == 0)) {
		make = (uintptr_t)dlsym(RTLD_NEXT, "make_fcontext");
		__atomic_store_n(&make_fcontext_addr, make, __ATOMIC_RELAXED);
	}
	uintptr_t r = (uintptr_t)return_address;
	return make && r > make && r < make + 0x80; /* Boost 1.74: make_fcontext+0x2f */
}

CTP_EXPORT struct fcontext_transfer jump_fcontext(void *to, void *vp)
{
	CTP_REAL(jump_fcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && to) {
		if (CTP_UNLIKELY(leaves_for_good(__builtin_return_address(0)))) {
			uint32_t idx = ctp_station_for_sp(t, (uint64_t)to);
			if (idx != t->current)
				ctp_coro_end_and_switch(t, idx, CTP_HOW_JUMP_FCONTEXT);
		} else {
			switch_to(t, to, vp, CTP_HOW_JUMP_FCONTEXT);
		}
	}
	/* Returns when someone switches back to us, maybe on another thread: nothing below may
	 * use `t`. The resumer has already updated our station. */
	return real_jump_fcontext(to, vp);
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

CTP_EXPORT struct fcontext_transfer ontop_fcontext(void *to, void *vp, fcontext_ontop_fn fn)
{
	CTP_REAL(ontop_fcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && to && fn) {
		if (CTP_UNLIKELY(is_last_switch(t, vp))) {
			uint32_t idx = ctp_station_for_sp(t, (uint64_t)to);
			if (idx != t->current) {
				/* Recorded once fn has returned: only then is the end known. */
				pending_end = (struct pending_end){.fn = fn, .to = idx};
				return real_ontop_fcontext(to, vp, end_trampoline);
			}
		}
		switch_to(t, to, vp, CTP_HOW_ONTOP_FCONTEXT);
	}
	return real_ontop_fcontext(to, vp, fn);
}

CTP_EXPORT void *make_fcontext(void *sp, size_t size, void (*fn)(struct fcontext_transfer))
{
	CTP_REAL(make_fcontext);
	void *ctx = real_make_fcontext(sp, size, fn);
	struct ctp_thread *t = ctp_thread_get();
	if (!t || !ctx || size == 0)
		return ctx;
	uint64_t hi = (uint64_t)sp, lo = hi - size;
	ctp_stackmap_retire_overlapping(t, lo, hi);
	uint32_t idx = ctp_station_alloc();
	if (idx == CTP_NO_STATION)
		return ctx;
	struct ctp_coro_private *p = ctp_station_private(idx);
	if (p)
		p->start_data = NULL;
	ctp_coro_begin(t, idx, ctp_coro_new_id(), CTP_KIND_FCONTEXT, (uint64_t)fn, lo, hi,
		       CTP_STATE_CREATED, 1);
	ctp_stackmap_add(idx, lo, hi);
	return ctx;
}

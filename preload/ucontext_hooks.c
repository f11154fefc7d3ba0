/* glibc ucontext: swapcontext, setcontext and makecontext. getcontext is left alone on purpose:
 * a C wrapper's frame would be gone when the saved context is resumed (see FACTS). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <ucontext.h>

#include "ctp/station.h"
#include "preload.h"
#include "real.h"

/* glibc passes makecontext's arguments on as 64-bit values on x86-64; so do we. */
#define ARGS16(a)                                                                                  \
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],    \
		a[14], a[15]
typedef void (*entry16_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
			   uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
			   uint64_t, uint64_t);

static inline uint64_t context_sp(const ucontext_t *ucp)
{
	return (uint64_t)ucp->uc_mcontext.gregs[REG_RSP];
}

CTP_EXPORT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	CTP_REAL(swapcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && ucp) {
		uint64_t now = ctp_now();
		uint32_t to = ctp_station_for_sp(t, context_sp(ucp));
		if (to != t->current)
			ctp_coro_switch(t, to, CTP_HOW_SWAPCONTEXT, 1, now);
	}
	/* Returns when someone switches back to oucp, maybe on another thread: nothing below may
	 * use `t`. The resumer has already updated our station. */
	return real_swapcontext(oucp, ucp);
}

CTP_EXPORT int setcontext(const ucontext_t *ucp)
{
	CTP_REAL(setcontext);
	struct ctp_thread *t = ctp_thread_get();
	if (t && ucp) {
		/* The context that leaves is never resumed through this call: it has ended. A
		 * setcontext to a context on the same stack (a getcontext loop) is no switch. */
		uint32_t to = ctp_station_for_sp(t, context_sp(ucp));
		if (to != t->current)
			ctp_coro_end_and_switch(t, to, CTP_HOW_SETCONTEXT);
	}
	return real_setcontext(ucp);
}

/* Every makecontext coroutine starts here, so that its return is seen: glibc switches to
 * uc_link by itself when the entry function returns, through no hookable call. */
static void entry_trampoline(unsigned int idx)
{
	struct ctp_coro_private *p = ctp_station_private(idx);
	uint64_t args[CTP_MAX_ENTRY_ARGS];
	for (int i = 0; i < CTP_MAX_ENTRY_ARGS; i++)
		args[i] = p->args[i];
	void *link = p->link;
	((entry16_fn)p->fn)(ARGS16(args));

	struct ctp_thread *t = ctp_thread_get();
	if (!t || t->current != idx)
		return;
	uint32_t to = link ? ctp_station_for_sp(t, context_sp(link)) : CTP_NO_STATION;
	/* With no uc_link the thread exits; the coroutine ends all the same. */
	ctp_coro_end_and_switch(t, to, CTP_HOW_RETURN);
}

CTP_EXPORT void makecontext(ucontext_t *ucp, void (*fn)(void), int argc, ...)
{
	CTP_REAL(makecontext);
	uint64_t args[CTP_MAX_ENTRY_ARGS] = {0};
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc && i < CTP_MAX_ENTRY_ARGS; i++)
		args[i] = va_arg(ap, uint64_t);
	va_end(ap);

	struct ctp_thread *t = ctp_thread_get();
	uint32_t idx = CTP_NO_STATION;
	if (t && argc >= 0 && argc <= CTP_MAX_ENTRY_ARGS)
		idx = ctp_station_alloc();
	if (idx == CTP_NO_STATION) {
		/* Untraced: more arguments than the trampoline forwards, or no station. */
		real_makecontext(ucp, fn, argc, ARGS16(args));
		return;
	}
	uint64_t lo = (uint64_t)ucp->uc_stack.ss_sp;
	uint64_t hi = lo + ucp->uc_stack.ss_size;
	ctp_stackmap_retire_overlapping(t, lo, hi);

	struct ctp_coro_private *p = ctp_station_private(idx);
	p->fn = fn;
	p->argc = argc;
	p->link = ucp->uc_link;
	for (int i = 0; i < CTP_MAX_ENTRY_ARGS; i++)
		p->args[i] = args[i];
	ctp_coro_begin(t, idx, ctp_coro_new_id(), CTP_KIND_UCONTEXT, (uint64_t)fn, lo, hi,
		       CTP_STATE_CREATED, 1);
	ctp_stackmap_add(idx, lo, hi);
	real_makecontext(ucp, (void (*)(void))entry_trampoline, 1, idx);
}

/* A thread's event ring (rings.c): attached on its first record, written with reserve and
 * commit. */
#ifndef CTP_PRELOAD_RINGS_H
#define CTP_PRELOAD_RINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/ring.h"
#include "preload/compiler.h"
#include "preload/threads.h"

/* Takes a ring for thread t and announces the thread (THREAD record with its coroutine id). */
CTP_HIDDEN bool ctp_ring_attach(struct ctp_thread *t, uint64_t thread_coro);
CTP_HIDDEN void ctp_ring_detach(struct ctp_thread *t);
/* Room for a record; NULL when dropped (counted). Finish with ctp_emit_commit. */
static inline void *ctp_emit_reserve(struct ctp_thread *t, uint32_t size)
{
	return ctp_ring_reserve(&t->ring, size);
}
CTP_HIDDEN void ctp_emit_wake_if_full(struct ctp_thread *t);

/* Publishes the record; wakes a sleeping collector only when the ring fills up (CTP.md
 * "Wakeup"). Inline: it runs for every record, the wake path almost never. */
static inline void ctp_emit_commit(struct ctp_thread *t)
{
	/* The fill once this record is in, taken before the commit's release store, after which
	 * the compiler reads every field again. */
	struct ctp_ring_producer *p = &t->ring;
	bool past_half = ctp_ring_fill(p) + p->pending > (p->mask + 1) / 2;
	ctp_ring_commit(p);
	if (CTP_UNLIKELY(past_half))
		ctp_emit_wake_if_full(t);
}
CTP_HIDDEN void ctp_rings_fork_child(struct ctp_thread *t);

#endif

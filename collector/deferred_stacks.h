/* Whole suspend stacks for coroutines that stay suspended (deferred_stacks.c). By default a
 * switch record carries only its call site; when the collector converts it and the coroutine is
 * still suspended there, the whole stack is unwound from the context its switch saved, reading
 * the live process's memory (ctp/stackwalk.h), or taken from the station where the process
 * unwound it itself at its end. */
#ifndef CTP_COLLECTOR_DEFERRED_STACKS_H
#define CTP_COLLECTOR_DEFERRED_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "collector/proc.h"
#include "ctp/station.h"

/* Where the latest queued suspend of `coro` is noted (ctp_deferred_note_queued). */
static inline struct ctp_queued_suspend *ctp_deferred_queued_slot(struct ctp_proc *p, uint64_t coro)
{
	uint64_t h = coro * 0x9e3779b97f4a7c15ull;
	return &p->queued_suspend[(h >> 32) & (CTP_PROC_QUEUED_SUSPENDS - 1)];
}

uint32_t ctp_deferred_stack_of_station(struct ctp_proc *p, uint64_t coro, uint32_t station,
				       uint32_t epoch, uint64_t call_site);

/* The interned whole stack of coroutine `coro`, suspended at call_site when its station
 * `station` had counted `epoch` (low 32 bits) resumes, if it is still suspended there; 0 when it
 * cannot be had (then the switch keeps its call site). Inline up to the look at the station:
 * most suspends are known to have ended (a later queued switch left the coroutine again). */
static inline uint32_t ctp_deferred_stack(struct ctp_proc *p, uint64_t coro, uint32_t station,
					  uint32_t epoch, uint64_t call_site)
{
	const struct ctp_queued_suspend *q = ctp_deferred_queued_slot(p, coro);
	/* A switch queued after this one left it again: it was resumed in between. */
	bool suspended_again = q->coro == coro && (int32_t)(q->epoch - epoch) > 0;
	if (station == UINT32_MAX || suspended_again)
		return 0;
	return ctp_deferred_stack_of_station(p, coro, station, epoch, call_site);
}

/* Notes a record as it is queued for conversion (collector/reorder.h): a switch away from a
 * coroutine that a later queued switch shows suspended again (so resumed in between) needs no
 * look at its station when it is converted. Records are held back a millisecond or more to be
 * put in time order, and a busy coroutine is resumed sooner: most switches are known resumed
 * this way, without the read of a station that the program writes at every switch (a cache
 * line taken from the program's core, about a tenth of the collector's time). */
void ctp_deferred_note_queued(struct ctp_proc *p, const struct ctp_rec *rec);

/* The stack to give the state of a suspended coroutine from snapshot s of station idx (at a
 * live snapshot or at the end): the one its last switch line got when it is the same suspend
 * (both lines must agree); else, when walks_left is not NULL and not 0, the process can be read
 * and the station holds only the call site, the whole stack unwound from its saved context now
 * (one walk taken from *walks_left); else the station's own; 0 for none. */
uint32_t ctp_deferred_state_stack(struct ctp_proc *p, uint32_t idx,
				  const struct ctp_station_snapshot *s, uint32_t *walks_left);

/* Frees what the unwinding of process p remembers (at the process's end). */
void ctp_deferred_free(struct ctp_proc *p);

/* The process's memory is gone (its end, or an exec): no more reading it. */
void ctp_deferred_memory_gone(struct ctp_proc *p);

#endif

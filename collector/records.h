/* Turning ring records and station snapshots of one process into trace lines, and the
 * bookkeeping that goes with it: announcing coroutines, interning stacks, converting clocks. */
#ifndef CTP_COLLECTOR_RECORDS_H
#define CTP_COLLECTOR_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "collector/proc.h"
#include "ctp/emit.h"
#include "ctp/station.h"

/* What ctp_records_visit works with: the process and the ring the records came from. */
struct ctp_visit_ctx {
	struct ctp_proc *p;
	struct ctp_ring_state *rs;
	uint64_t malformed; /* records too short for what they claim */
};

/* Converts one record into its lines. The record is the collector's own copy (the reorder
 * queue's), which the process cannot change any more, so it is read in place; `avail` bytes of
 * it are there, and a record whose size or contents claim more is counted as malformed. */
void ctp_records_visit(struct ctp_visit_ctx *v, const struct ctp_rec *rec, size_t avail);

/* Frames the process keeps per stack (its segment's header), 0 when stacks are off, -1 when
 * the segment is not mapped. */
int ctp_proc_stack_depth(const struct ctp_proc *p);

/* Writes the `coro_end` line of `c`, once: how (enum ctp_end_how) it ended, on which thread
 * and when (ts 0: unknown). */
void ctp_proc_coro_end(struct ctp_proc *p, struct ctp_coro *c, uint32_t how, uint32_t switch_how,
		       uint32_t tid, uint64_t ts);

/* A clock reading of the segment, in CLOCK_MONOTONIC ns. Inline: every record has one. */
static inline uint64_t ctp_proc_ts(const struct ctp_proc *p, uint64_t raw)
{
	if (p->clock_kind == CTP_CLOCK_TSC && p->c->have_tsc)
		return ctp_tsc_model_ns(ctp_collector_tsc(p->c), raw);
	return raw;
}

/* The id of a stack (n >= 1 frames), writing its `stack` line first when it is new. */
uint32_t ctp_proc_intern_stack(struct ctp_proc *p, const uint64_t *frames, uint32_t n);

/* What `addr` is (return_address: a frame's return address, else an entry address), and a
 * `module` line for each module the lookup made known, written before the line that will refer
 * to the answer. */
const struct ctp_sym *ctp_proc_symbol(struct ctp_proc *p, uint64_t addr, bool return_address);

/* Finds the station that holds coroutine `id` now. */
bool ctp_proc_find_station(struct ctp_proc *p, uint64_t id, struct ctp_station_snapshot *out);

/* Calls fn for every station in use. Returns false if any could not be read consistently. */
typedef void (*ctp_station_fn)(struct ctp_proc *p, uint32_t idx,
			       const struct ctp_station_snapshot *s, void *ctx);
void ctp_proc_each_station(struct ctp_proc *p, ctp_station_fn fn, void *ctx);

/* Writes the `coro` line of a coroutine seen in an event before its creation was (its CREATE
 * record was dropped, or it was inherited across fork), from its station when one holds it. */
void ctp_proc_announce_unknown(struct ctp_proc *p, struct ctp_coro *c);

/* Writes the `coro` line of `c` from its station `s`, unless it was announced already. */
void ctp_proc_announce_station(struct ctp_proc *p, struct ctp_coro *c,
			       const struct ctp_station_snapshot *s);

/* The `state` line of station snapshot s (station idx), in `state` (the station's, or what its
 * process's end or a snapshot made of a LEFT one): since its last switch; no wait once it runs
 * or has exited (the wait ended, even if no switch says so yet); a suspended one with the stack
 * ctp_deferred_state_stack gives it (walks_left as there). */
struct ctp_state_line ctp_proc_state_line(struct ctp_proc *p, uint32_t idx,
					  const struct ctp_station_snapshot *s, uint32_t state,
					  uint32_t *walks_left);

#endif

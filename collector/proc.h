/* One traced process as the collector sees it: its mapped segment, the state of each of its
 * rings, and what it has told so far (coroutines, stacks, symbols). Harvesting turns ring
 * records into trace lines; ending writes the final state of every coroutine. */
#ifndef CTP_COLLECTOR_PROC_H
#define CTP_COLLECTOR_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/collector.h"
#include "collector/coro_table.h"
#include "collector/stack_table.h"
#include "collector/symcache.h"
#include "ctp/segment_view.h"

/* A ring, found by its block offset; pointers are recomputed after every remap. */
struct ctp_ring_state {
	uint64_t off;
	struct ctp_ring_ref ref;
	uint32_t tid;	       /* thread whose records follow (from THREAD records) */
	uint64_t last_dropped; /* ring->dropped at the last harvest */
	bool live;	       /* still found in the last block walk */
};

#define CTP_PROC_MAX_RUNNING 16

struct ctp_proc {
	struct ctp_collector *c;
	uint32_t pid, ppid;
	int memfd;
	struct ctp_segment_view view; /* base == NULL once unmapped */
	uint64_t seen_segment_size;   /* header.segment_size at the last remap check */
	uint64_t walked_head;	      /* header.blocks_head at the last block walk */
	bool need_walk;
	uint32_t clock_kind;
	bool exec_sent; /* sent EXEC: its end is an exec, not an exit */
	bool corrupt_warned;

	struct ctp_ring_state *rings;
	size_t nrings, rings_cap;
	uint64_t *chunk_offs; /* station chunks */
	size_t nchunks, chunks_cap;

	struct ctp_coro_table coros;
	struct ctp_stack_table stacks;
	struct ctp_symcache syms;

	/* Filled by ctp_proc_write_states: coroutines whose station said running. */
	uint64_t running[CTP_PROC_MAX_RUNNING];
	size_t nrunning;
};

/* Maps the segment `memfd` (whose seal and header it checks) for process pid. Returns NULL
 * with a reason in `why` when the segment is refused; memfd is then not closed. */
struct ctp_proc *ctp_proc_open(struct ctp_collector *c, int memfd, uint32_t pid, uint32_t ppid,
			       char *why, size_t why_len);

/* One pass over every ring: at most `budget` bytes per ring (0 = all there is). Returns the
 * bytes consumed. */
uint64_t ctp_proc_harvest(struct ctp_proc *p, uint64_t budget);

/* Reads every ring until it is empty (bounded, for a process that is still writing). */
void ctp_proc_drain(struct ctp_proc *p);

/* Stores the collector's sleep flag into the segment (sequentially consistent). */
void ctp_proc_set_sleep(struct ctp_proc *p, uint32_t v);

/* Writes one `state` line per coroutine that ever existed in the process. */
void ctp_proc_write_states(struct ctp_proc *p);

/* How the process recorded its own end (header.exit_kind); false when it did not. */
bool ctp_proc_header_exit(struct ctp_proc *p, struct ctp_exit_line *out);

/* Unmaps, closes the memfd and frees. */
void ctp_proc_free(struct ctp_proc *p);

#endif

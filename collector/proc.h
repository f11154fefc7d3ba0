/* One traced process as the collector sees it: its segment's header and chunks, the state of
 * each of its rings, and what it has told so far (coroutines, stacks, symbols). The harvester
 * thread moves its ring records into a spool (collector/harvest.h); converting, on the main thread,
 * turns spooled records into trace lines; ending writes the final state of every coroutine. */
#ifndef CTP_COLLECTOR_PROC_H
#define CTP_COLLECTOR_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/collector.h"
#include "collector/coro_table.h"
#include "collector/ended_coros.h"
#include "collector/harvest.h"
#include "collector/reorder.h"
#include "collector/block_window.h"
#include "ctp/stack_table.h"
#include "ctp/symcache.h"
#include "ctp/segment_view.h"

/* What the converter knows of one ring of the process (the ring with the same index in the
 * harvest). Its records are read from the collector's own copy (the reorder queue), never
 * from the segment. */
struct ctp_ring_state {
	uint32_t tid; /* thread whose records follow (from THREAD records) */
	bool known;   /* a batch of this ring was seen */
};

#define CTP_PROC_MAX_RUNNING 16
#define CTP_PROC_QUEUED_SUSPENDS 1024 /* a power of two */
#define CTP_PROC_ONE_FRAME_STACKS 256 /* a power of two */

struct ctp_proc {
	struct ctp_collector *c;
	uint32_t pid, ppid;
	int memfd;
	/* The converter's mappings (collector/block_window.h): the header's page, as a view from
	 * the segment's start (base == NULL once unmapped), and each station chunk and module
	 * chunk in a window of its own, never unmapped before the process's end, so that what
	 * points into one stays good. */
	struct ctp_segment_view view;
	uint64_t walked_head; /* header.blocks_head when the block list was last walked */
	uint32_t unmapped;    /* chunks found whose window could not be mapped yet */
	bool unmapped_said;
	struct ctp_harvest hv; /* the rings, the harvester's mappings and the spool */
	uint32_t clock_kind;
	bool exec_sent;		    /* sent EXEC: its end is an exec, not an exit */
	uint32_t fork_children;	    /* its fork children that said hello while it was connected */
	struct ctp_notices notices; /* what the main thread read on its connection (loop.c) */
	bool corrupt_warned;
	bool order_flushed; /* the reorder queue was let out early, out of memory: said */

	struct ctp_reorder order;	 /* records waiting to be let out in time order */
	uint64_t pass_last, pass_before; /* marks of the last two harvest passes (CTP_SPOOL_PASS) */
	struct ctp_ring_state *rings;	 /* indexed like hv.rings */
	size_t nrings, rings_cap;
	/* Station chunks, oldest first (the order of their stations' indices); ref.count == 0
	 * until mapped (or when unsound). */
	struct ctp_proc_chunk {
		uint64_t off;
		struct ctp_block_window window;
		struct ctp_chunk_ref ref;
		bool unsound;
	} * chunks;
	size_t nchunks, chunks_cap;
	/* Module chunks, oldest first; read by the symbol cache through `modules`. */
	struct ctp_proc_mod_chunk {
		uint64_t off;
		struct ctp_block_window window;
		bool unsound;
	} * mod_chunks;
	size_t nmod_chunks, mod_chunks_cap;
	struct ctp_module_source modules;
	/* The chunk last found by a station index (deferred_stacks.c); count == 0 when none.
	 * Most processes have one chunk, and each switch record asks for a station. */
	struct ctp_chunk_ref chunk_hint;
	/* The latest suspend of each coroutine among the records queued, by a hash of its id
	 * (deferred_stacks.c, ctp_deferred_note_queued). */
	struct ctp_queued_suspend {
		uint64_t coro;
		uint32_t epoch;
	} queued_suspend[CTP_PROC_QUEUED_SUSPENDS];

	struct ctp_coro_table coros; /* live coroutines, and ended ones until retired */
	struct ctp_ended_coros ended;
	struct ctp_stack_table stacks;
	/* Stacks of one frame by that frame as the record holds it, a cache in front of `stacks`
	 * (records.c, ctp_proc_intern_stack): most switch lines carry their call site alone, and
	 * interning it took a copy, the trampoline's check and a hash lookup each. id 0: empty. */
	struct ctp_one_frame_stack {
		uint64_t frame;
		uint32_t id;
	} one_frame[CTP_PROC_ONE_FRAME_STACKS];
	struct ctp_symcache syms;
	size_t modules_written; /* syms.mods[0 .. this) have their `module` line */

	/* Reading its memory for stacks (deferred_stacks.c). */
	struct ctp_stackwalk *walker;
	uint8_t walk_state;		    /* enum in deferred_stacks.c */
	struct ctp_walked_layout **layouts; /* [stack id - 1], NULL where none is known */
	size_t layouts_cap;

	/* Filled by ctp_proc_write_states: coroutines whose station said running. */
	uint64_t running[CTP_PROC_MAX_RUNNING];
	size_t nrunning;
};

/* Maps the segment `memfd` (whose seal and header it checks) for process pid; its spool
 * draws from `budget`. Returns NULL with a reason in `why` when the segment is refused; memfd
 * is then not closed. */
struct ctp_proc *ctp_proc_open(struct ctp_collector *c, int memfd, uint32_t pid, uint32_t ppid,
			       struct ctp_spool_budget *budget, char *why, size_t why_len);

/* Turns the records no ring can still precede into lines (also called on the loop's tick, so
 * that an idle process's last records do not wait for its next activity). */
void ctp_proc_release_ordered(struct ctp_proc *p);
/* Turns every record queued for ordering that is older than `until` into lines: only when no
 * ring can still hold an older one (its rings were emptied after `until`). */
void ctp_proc_release_until(struct ctp_proc *p, uint64_t until);
/* Converts spooled records into lines: about `max_bytes` of them (0 = all there are). Returns
 * the spool bytes converted. Main thread only. */
uint64_t ctp_proc_convert(struct ctp_proc *p, uint64_t max_bytes);

/* Follows the segment's growth: maps the station and module chunks added since the last look
 * (and those it could not map before): records converted now, and snapshots and final states,
 * may name coroutines whose stations lie in blocks added since. Cheap when nothing was added.
 * Main thread only. */
void ctp_proc_follow_growth(struct ctp_proc *p);

/* Reads every ring until it is empty (bounded, for a process that is still writing) and
 * converts everything. Only once the harvester has let go of the process
 * (ctp_harvester_remove). */
void ctp_proc_drain(struct ctp_proc *p);

/* Writes one `state` line per coroutine that ever existed in the process. */
void ctp_proc_write_states(struct ctp_proc *p);

/* Writes a `snapshot` line and the state of every live coroutine now, while the process runs
 * (proc_snapshot.c). spooled_before (the process's clock; 0: not known) is a moment before
 * which every record the process published is spooled: the events up to it go out before the
 * snapshot, none held back for ordering. Main thread only. */
void ctp_proc_write_snapshot(struct ctp_proc *p, uint64_t spooled_before);

/* How the process recorded its own end (header.exit_kind); false when it did not. */
bool ctp_proc_header_exit(struct ctp_proc *p, struct ctp_exit_line *out);

/* Unmaps, closes the memfd and frees. */
void ctp_proc_free(struct ctp_proc *p);

#endif

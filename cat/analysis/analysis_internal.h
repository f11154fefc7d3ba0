/* The analysis's own state: the model (analysis.c) builds it, the findings
 * (analysis_findings.c) read it (when it is finished, or at a snapshot of a trace being
 * followed), never the other way round. Not for the
 * analysis's users: they read cat/analysis.h. */
#ifndef CTP_CAT_ANALYSIS_INTERNAL_H
#define CTP_CAT_ANALYSIS_INTERNAL_H

#include "cat/analysis/analysis.h"
#include "cat/model/idmap.h"
#include "cat/model/runs.h"
#include "cat/model/strings.h"

/* What the streaming pass tracks of only some coroutines, kept apart from struct an_coro (made
 * on first need), so that the millions of a big trace that never wait on an fd nor run for
 * long do not carry it: these fields were a third of a coroutine's record. */
struct an_side {
	/* What it waits on now, from its latest `would_block` (wait_ts 0: nothing known). */
	int wait_fd;
	const char *wait_op;
	uint64_t wait_ts;
	uint32_t wait_stack;
	/* The first close of that fd after the wait began (close_ts 0: none seen). */
	int closed_fd;
	uint64_t close_ts, close_coro;
	uint32_t close_tid, close_stack;
	/* The fd was reported ready and it has not been resumed since (ready_ts 0: none). */
	int ready_fd;
	const char *ready_op;
	uint64_t ready_ts;
	/* The worst late resume after readiness (late_ns 0: none over the threshold). */
	int late_fd;
	const char *late_op;
	uint64_t late_ready_ts, late_ns;
	uint32_t late_stack;
	/* Its longest run, once one was over the never-yielded threshold: when it began, the
	 * thread and where it switched away after it. */
	uint64_t longest_run_start;
	uint32_t longest_run_tid, longest_run_stack;
};

/* A coroutine, with what the streaming pass tracks on top of what users see. */
struct an_coro {
	struct ctp_analysis_coro pub;
	uint32_t side; /* 1 + its index in ctp_analysis.sides; 0: none needed yet */
	/* Its first suspend (the first switch away from it read): its stack and target; and the
	 * target of its latest one. What tells an idle coroutine (analysis_idle.c). A target is
	 * 1 + its index in coros (0: none), not its id: 4 bytes where 8 were, for each of millions.
	 */
	uint32_t first_suspend_stack;
	uint32_t first_suspend_to, last_suspend_to;
};

/* The latest coroutine that got EAGAIN on an fd, for fd lines that name no waiter. */
struct an_fd_waiter {
	uint64_t coro;
	uint64_t ts;
};

struct an_process {
	struct ctp_analysis_process pub;
	char **argv; /* owned copies */
	bool seen_process_line;
	bool exec_replaced; /* a later `process` line for the same pid took over */
	bool moved_on;	    /* events later than its snapshot followed it */
	uint64_t exit_ts;   /* `ts` of the exit line, when it has one */
};

struct ctp_analysis {
	struct ctp_analysis_options opt;
	struct ctp_analysis_summary sum;
	uint64_t end_ts; /* `ts` of an `end` line */
	struct ctp_strings strings;
	struct an_process *procs;
	size_t nprocs, cap_procs;
	struct ctp_idmap latest_proc; /* (pid, 0) -> index of its latest process record */
	struct an_coro *coros;
	size_t ncoros, cap_coros;
	struct an_side *sides;
	size_t nsides, cap_sides;
	struct ctp_idmap coro_index; /* (process index, coro id) -> index in coros */
	struct ctp_analysis_stack *stacks;
	size_t nstacks, cap_stacks;
	struct ctp_idmap stack_index; /* (process index, stack id) -> index in stacks */
	struct an_fd_waiter *fd_waiters;
	size_t nfd_waiters, cap_fd_waiters;
	struct ctp_idmap fd_index; /* (process index, fd) -> index in fd_waiters */
	struct ctp_runs runs;	   /* what each thread runs: the longest runs */
	struct ctp_finding *findings;
	size_t nfindings, cap_findings;
	size_t failures;
	bool finished; /* ctp_analysis_finish was called: no more events, no more judgements */
};

/* The coroutine's fd record, or one that says it has seen none (read only). */
const struct an_side *ctp_an_side(const struct ctp_analysis *a, const struct an_coro *c);

/* The time a process's record ends: its exit, else the last time seen (or the trace's end). */
uint64_t ctp_an_process_end(const struct ctp_analysis *a, const struct an_process *p);

/* Whether the trace shows the process to its end, so that its findings are certain: it
 * exited (or exec'd) in a whole trace, or its last word is a snapshot nothing followed. */
bool ctp_an_seen_to_end(const struct ctp_analysis *a, const struct an_process *p);

/* Marks the coroutines suspended at the end that are idle in their runtime (pub.idle) and
 * counts them; explained[i]: coroutine i is a lost wakeup or missed readiness, never idle.
 * Returns 0, or -1 when out of memory. */
int ctp_an_find_idle(struct ctp_analysis *a, const bool *explained);

/* What the findings read of a coroutine at its process's end (analysis_findings.c): whether it
 * is suspended (the final state line, else its switches), its suspend stack, and the fd it
 * waits on (-1: none; *op its operation). */
bool ctp_an_suspended_at_end(const struct an_coro *c);
uint32_t ctp_an_suspend_stack(const struct ctp_analysis *a, const struct an_coro *c);
int ctp_an_final_wait_fd(const struct ctp_analysis *a, const struct an_coro *c, const char **op);

/* Takes in how reading ended: completeness and the summary's line counts. NULL: read to the end
 * line (whole), or, when `live`, not ended: the trace is still being written. */
void ctp_an_take_end(struct ctp_analysis *a, const struct ctp_trace_end *end, bool live);

#endif

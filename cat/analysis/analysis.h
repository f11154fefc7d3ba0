/* The analysis of a trace: a model built by reading the trace once, line by line, and the
 * findings drawn from it (docs/report.md says what each finding means).
 *
 * The model keeps, per process: its coroutines (kind, entry, creation stack, creation and end,
 * last resume and suspend, final state), the little fd history the findings need (per fd: who
 * waits on it, its last close and readiness), the exit, and the interned stacks. Memory grows
 * with coroutines, fds and distinct stacks, never with the number of switches.
 *
 * Use: ctp_analysis_new(), one ctp_analysis_add_event() per decoded event (cat/model/event.h,
 * derived ones included), then ctp_analysis_finish(). ctp-cat does this once per run, for every
 * output that shows the model (cat/analysis/analysis_stage.c). After finish, everything below is
 * read-only and stays valid until ctp_analysis_free(). Findings can also be drawn on the way
 * (ctp_analysis_judge_so_far): they are then valid until the next event or judgement. */
#ifndef CTP_CAT_ANALYSIS_H
#define CTP_CAT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/model/event.h"
#include "cat/reader/trace_reader.h"

#define CTP_NS_PER_SEC 1000000000ull

struct ctp_analysis_options {
	/* missed_readiness: a ready fd whose waiter was not resumed within this long. */
	uint64_t missed_after_ns;
	/* never_yielded: a coroutine that ran this long without switching. */
	uint64_t never_yielded_after_ns;
};

/* The defaults: 1 s and 1 s. */
void ctp_analysis_options_default(struct ctp_analysis_options *opt);

struct ctp_analysis;

/* NULL when out of memory. `opt` NULL means the defaults. */
struct ctp_analysis *ctp_analysis_new(const struct ctp_analysis_options *opt);

/* Feeds one event. Unknown types and fields are ignored. Returns 0, or -1 when out of memory. */
int ctp_analysis_add_event(struct ctp_analysis *a, const struct ctp_event *ev);

/* After the last event: draws the findings. `end` is how reading ended (NULL: whole). Returns 0,
 * or -1 when out of memory. */
int ctp_analysis_finish(struct ctp_analysis *a, const struct ctp_trace_end *end);

/* Draws the findings from the model built so far, of a trace still being written (so not
 * complete: findings are certain only where a snapshot is a process's last word). Replaces the
 * findings of an earlier call; events may follow, and later calls or ctp_analysis_finish judge
 * them with the rest. The model is kept, not copied: this costs one pass over the coroutines
 * (ctp-cat --follow --report, at each snapshot). Returns 0, or -1 when out of memory. */
int ctp_analysis_judge_so_far(struct ctp_analysis *a);

void ctp_analysis_free(struct ctp_analysis *a);

/* ---- the model ---- */

struct ctp_analysis_summary {
	uint64_t processes;	  /* process records (an exec starts a new one for the same pid) */
	uint64_t processes_ended; /* of which with an `exit` line */
	uint64_t crashed;	  /* of which died by a signal */
	uint64_t coroutines;	  /* coroutines of every kind, threads' own stacks included */
	uint64_t threads;	  /* of which kind "thread" */
	uint64_t switches;	  /* `switch` lines */
	uint64_t lost;		  /* events dropped, from `loss` lines */
	uint64_t fd_events;	  /* `fd` lines */
	uint64_t stacks;	  /* distinct stacks */
	uint64_t first_ts, last_ts; /* earliest and latest time seen (0 if none) */
	uint64_t lines, bad_lines;
	uint64_t missing_lines; /* lines the `end` line counts that are not in the trace (the
				 * collector could not write them: a full disk) */
	bool complete;		/* the trace was read whole (see docs/trace-format.md) */
	bool live;    /* judged so far, the trace still being written (ctp_analysis_judge_so_far) */
	bool has_end; /* an `end` line was read */
	bool uncertain; /* loss, a cut, or a process without exit: findings may miss or be
			 * wrong, see docs/report.md */
	uint64_t idle;	/* coroutines idle at the end (see enum ctp_analysis_idle) */
	uint64_t missed_after_ns, never_yielded_after_ns; /* the thresholds used */
};

const struct ctp_analysis_summary *ctp_analysis_summary(const struct ctp_analysis *a);

struct ctp_analysis_frame {
	uint64_t addr;
	const char *sym; /* NULL if unknown */
	uint64_t off;
	const char *module;  /* NULL if unknown */
	const char *file;    /* NULL without debug info */
	int line;	     /* 0 without debug info */
	bool has_module_off; /* the address in the module's file is known: */
	uint64_t module_off; /* addr less the module's load bias */
};

struct ctp_analysis_stack {
	uint32_t pid;
	uint32_t id;
	size_t nframes;
	const struct ctp_analysis_frame *frames; /* innermost first */
	/* The outermost frame is where a makecontext coroutine started (the trace's
	 * "reaches_start"); traces written before it said so end such stacks in the tracer's
	 * trampoline instead. */
	bool reaches_start;
};

enum ctp_analysis_exit {
	CTP_ANALYSIS_EXIT_NONE,	   /* no `exit` line: still running at the end, or its end lost */
	CTP_ANALYSIS_EXIT_UNKNOWN, /* `exit` with status null */
	CTP_ANALYSIS_EXIT_STATUS,
	CTP_ANALYSIS_EXIT_SIGNAL,
	/* No `exit`: the process was running, and a `snapshot` line (ctp-pstack) says that the
	 * `state` lines after it are every coroutine as it was at snapshot_ts. Its states are
	 * authoritative up to then, as at an exit. */
	CTP_ANALYSIS_EXIT_SNAPSHOT,
};

struct ctp_analysis_process {
	size_t index; /* position in ctp_analysis_process_at() */
	uint32_t pid, ppid;
	const char *exe;	 /* NULL if unknown */
	const char *const *argv; /* argc strings */
	size_t argc;
	uint64_t first_ts, last_ts; /* times seen in its lines */
	enum ctp_analysis_exit exit;
	int exit_value;	      /* status or signal number */
	uint64_t snapshot_ts; /* CTP_ANALYSIS_EXIT_SNAPSHOT: when the snapshot was taken */
	uint32_t crash_tid;   /* 0 if unknown */
	uint64_t crash_coro;  /* 0 if unknown */
	uint64_t crash_addr;  /* 0 if unknown */
	uint32_t crash_stack; /* 0 if unknown */
	uint64_t coroutines, switches, lost, fd_events;
	bool has_states; /* `state` lines were read */
};

size_t ctp_analysis_process_count(const struct ctp_analysis *a);
const struct ctp_analysis_process *ctp_analysis_process_at(const struct ctp_analysis *a, size_t i);
/* The latest process record of `pid`, or NULL. */
const struct ctp_analysis_process *ctp_analysis_process_find(const struct ctp_analysis *a,
							     uint32_t pid);

/* The values of the contract's enum ctp_coro_state (ctp/segment.h), whose words a `state`
 * line uses (ctp/names.h). */
enum ctp_analysis_state {
	CTP_ANALYSIS_STATE_UNKNOWN = 0, /* no `state` line */
	CTP_ANALYSIS_STATE_CREATED = 1,
	CTP_ANALYSIS_STATE_RUNNING = 2,
	CTP_ANALYSIS_STATE_SUSPENDED = 3,
	CTP_ANALYSIS_STATE_EXITED = 4,
};

const char *ctp_analysis_state_name(enum ctp_analysis_state s);

/* Why a coroutine suspended at its process's end is idle rather than stuck: it waits in its
 * runtime for new work, as the runtime means it to (docs/report.md, "Idle coroutines"). */
enum ctp_analysis_idle {
	CTP_ANALYSIS_IDLE_NO = 0,
	/* Pooled: its first act was to hand control back to its creator from its entry function
	 * (a runtime's start handshake), and it ended suspended at its entry function's top level
	 * again, at another place: the work it was made for was done. QEMU's coroutine pool. */
	CTP_ANALYSIS_IDLE_POOLED,
	/* An end helper: every resume it got was the last switch of a coroutine that then ended
	 * (libpcl's delete helper, a uc_link reaper): it only ever ran to clean up after others. */
	CTP_ANALYSIS_IDLE_END_HELPER,
};

/* "pooled", "end_helper"; NULL for CTP_ANALYSIS_IDLE_NO. */
const char *ctp_analysis_idle_name(enum ctp_analysis_idle why);

/* Whether a frame belongs to the tracer itself (the preload's hooks and trampolines, the
 * unwinder) rather than to the program. */
bool ctp_analysis_tracer_frame(const struct ctp_analysis_frame *fr);

/* Fields are ordered so that the 32-bit ones pair up, and the small ones share 8 bytes: a big
 * trace holds millions of these (a million: 16 MB less than with a word each). */
struct ctp_analysis_coro {
	uint32_t index;	  /* position in ctp_analysis_coro_at() */
	uint32_t process; /* index of its process */
	uint64_t id;
	uint32_t pid;
	uint32_t tid;	   /* thread that created it */
	const char *kind;  /* "thread", "ucontext", "fcontext", "simgrid_raw", or NULL */
	const char *entry; /* NULL if unknown */
	uint64_t entry_addr, parent;
	uint64_t created_ts;			  /* 0 if unknown */
	uint32_t create_stack;			  /* 0 if none */
	uint32_t last_tid;			  /* thread it last ran on */
	uint64_t ended_ts;			  /* 0 if unknown */
	uint64_t resumes;			  /* switch lines that resumed it */
	uint64_t last_resume_ts, last_suspend_ts; /* 0 if never */
	uint32_t last_suspend_stack;		  /* 0 if unknown */
	uint32_t state_tid;
	uint64_t longest_run_ns; /* longest time between a resume and a suspend */
	/* The final `state` line (state UNKNOWN when none). */
	uint64_t state_since;
	uint64_t state_switches;
	uint32_t state_stack;
	int wait_fd;	     /* -1: waits on no fd (or not known) */
	const char *wait_op; /* NULL if unknown */
	enum ctp_analysis_state state : 8;
	enum ctp_end_how end_how : 8;
	signed int wait_closed : 8; /* 1 the fd was closed while it waited, 0 not, -1 unknown */
	bool ended;		    /* its coro_end event was seen (cat/model/event.h) */
	/* Set by ctp_analysis_finish: suspended at the end, idle in its runtime, so neither stuck
	 * nor leaked. */
	enum ctp_analysis_idle idle : 8;
};

size_t ctp_analysis_coro_count(const struct ctp_analysis *a);
/* Every coroutine of every process, in the order the trace first names them. */
const struct ctp_analysis_coro *ctp_analysis_coro_at(const struct ctp_analysis *a, size_t i);
/* The coroutine `coro` of the latest process record of `pid`, or NULL. */
const struct ctp_analysis_coro *ctp_analysis_coro_find(const struct ctp_analysis *a, uint32_t pid,
						       uint64_t coro);
/* The coroutine `coro` of the process record with index `process`, or NULL. */
const struct ctp_analysis_coro *ctp_analysis_coro_in(const struct ctp_analysis *a, size_t process,
						     uint64_t coro);
/* The stack `id` of the latest process record of `pid`, or NULL (also for id 0). */
const struct ctp_analysis_stack *ctp_analysis_stack_find(const struct ctp_analysis *a, uint32_t pid,
							 uint32_t id);
/* The same, within the process record with index `process` (for exec'd pids). */
const struct ctp_analysis_stack *ctp_analysis_stack_in(const struct ctp_analysis *a, size_t process,
						       uint32_t id);

/* ---- findings ---- */

/* In order of importance: findings are sorted by kind in this order, then by pid and coro. */
enum ctp_finding_kind {
	CTP_FINDING_CRASH,
	CTP_FINDING_LOST_WAKEUP,
	CTP_FINDING_MISSED_READINESS,
	CTP_FINDING_STUCK,
	CTP_FINDING_NEVER_YIELDED,
	CTP_FINDING_LEAK,
};
#define CTP_FINDING_KIND_COUNT (CTP_FINDING_LEAK + 1)

/* "crash", "lost_wakeup", "missed_readiness", "stuck", "never_yielded", "leak". */
const char *ctp_finding_kind_name(enum ctp_finding_kind kind);

/* True for the kinds that make `ctp-cat --report` exit with 3. */
bool ctp_finding_kind_is_failure(enum ctp_finding_kind kind);

/* Fields that do not apply to a kind are 0, -1 (fd) or NULL. docs/report.md has the table. */
struct ctp_finding {
	enum ctp_finding_kind kind;
	size_t process; /* index of its process */
	uint32_t pid;
	uint64_t coro; /* 0 for a group (stuck, leak) and for a crash outside any coroutine */
	int fd;	       /* -1 if none */
	const char *op;
	/* lost_wakeup, missed_readiness: where it suspended to wait; stuck: the group's suspend
	 * stack; leak: the group's creation stack; never_yielded: where it finally switched
	 * away (0 when it was still running); crash: where it died, when known. */
	uint32_t stack;
	uint64_t ts;	      /* lost_wakeup, stuck: when it suspended (a group: the earliest);
			       * missed_readiness: when the fd was reported ready;
			       * never_yielded: when the run began; crash: 0 */
	uint64_t duration_ns; /* lost_wakeup, stuck: suspended until the process's end (a group:
			       * the longest); missed_readiness: ready until resumed or the end;
			       * never_yielded: the run's length */
	bool at_end;	      /* missed_readiness: not resumed by the end; never_yielded: still
			       * running at the end */
	/* lost_wakeup: the close of the fd (close_ts 0 when the close itself was not seen). */
	uint64_t close_ts;
	uint64_t close_coro;
	uint32_t close_tid;
	uint32_t close_stack;
	/* crash */
	int signal;
	uint32_t tid; /* crash: the thread; never_yielded: the thread it ran on */
	uint64_t addr;
	/* stuck, leak: the group's members (count of them), and for stuck the fd each waits on
	 * (-1 where none). */
	size_t count;
	const uint64_t *coros;
	const int *fds;
	/* The findings may be wrong or incomplete: events of this process were lost, or its end
	 * was not seen. */
	bool uncertain;
	/* One cause, one incident: numbered from 1 in report order. Lost wakeups that one close
	 * path caused (same process, wait stack, closer and close stack, operation) share theirs;
	 * every other finding is an incident of its own. A coroutine that a lost wakeup or a
	 * missed readiness explains is not listed again as stuck or leaked. */
	uint32_t incident;
};

size_t ctp_analysis_finding_count(const struct ctp_analysis *a);
const struct ctp_finding *ctp_analysis_finding_at(const struct ctp_analysis *a, size_t i);
/* How many findings make the report fail (crash, lost_wakeup, missed_readiness). */
size_t ctp_analysis_failure_count(const struct ctp_analysis *a);
/* counts[kind]: how many incidents (see ctp_finding.incident) the findings of each kind make. */
void ctp_analysis_count_incidents(const struct ctp_analysis *a,
				  size_t counts[CTP_FINDING_KIND_COUNT]);

#endif

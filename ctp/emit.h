/* Writing the trace lines (docs/trace-format.md): each function builds one line with the JSON
 * writer, in place in the frame the zstd writer is building (the emitter holds no text of its
 * own, so there is nothing to free). No printf, no allocation per line. Used by the
 * collector, and by ctp-pstack for the snapshot of a running process. */
#ifndef CTP_EMIT_H
#define CTP_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/symcache.h"
#include "ctp/segment.h"
#include "ctp/jsonw.h"
#include "ctp/zwriter.h"

/* Switch line heads kept (ctp_emitter), a power of two. */
#define CTP_EMIT_SWITCH_HEADS 16

/* Switch line tails kept (ctp_emitter), and the longest kept. */
#define CTP_EMIT_SWITCH_TAIL_BITS 6
#define CTP_EMIT_SWITCH_TAILS (1u << CTP_EMIT_SWITCH_TAIL_BITS)
#define CTP_EMIT_SWITCH_TAIL_MAX 64

/* enum ctp_switch_how's values, 0 (unknown) included. */
#define CTP_EMIT_HOW_COUNT (CTP_HOW_RAW_SWAPCONTEXT + 1)

struct ctp_emitter {
	size_t line_start; /* where the line being written began in the writer's text */
	char how_json[CTP_EMIT_HOW_COUNT][40]; /* `,"how":"...","stack":` per value */
	uint8_t how_len[CTP_EMIT_HOW_COUNT];
	/* The start of a switch line up to its `ts` value, for the last few threads it was made
	 * for (by thread id, direct-mapped): lines of several threads' rings interleave. */
	struct ctp_switch_head {
		char text[64];
		uint8_t len; /* 0: empty */
		uint32_t pid, tid;
	} switch_heads[CTP_EMIT_SWITCH_HEADS];
	/* The rest of a switch line from `,"from":` on, for the last few (from, to, how, stack)
	 * written (direct-mapped by a hash of them): a program's coroutines switch between the
	 * same pairs at the same call sites over and over, and a copy costs about a quarter of
	 * the instructions of writing three numbers. */
	struct ctp_switch_tail {
		uint64_t from, to;
		uint64_t how_stack; /* stack << 32 | how */
		char text[CTP_EMIT_SWITCH_TAIL_MAX];
		uint8_t len; /* 0: empty */
	} switch_tails[CTP_EMIT_SWITCH_TAILS];
	struct ctp_zwriter *z;
	struct ctp_jsonw *text; /* the writer's text (ctp_zwriter_text), which stays where it is */
	/* what the summary reports */
	/* coros counts coroutines proper; threads, the threads' own stacks (both are coro lines).
	 */
	uint64_t processes, coros, threads, switches, lost;
};

void ctp_emit_init(struct ctp_emitter *e, struct ctp_zwriter *z);

void ctp_emit_trace(struct ctp_emitter *e, uint64_t start_ns);

/* `strings` holds exe then argc argv entries, each NUL-terminated, within `len` bytes;
 * `stack_depth` is the frames the process keeps per stack (0: stacks off, -1: unknown). */
void ctp_emit_process(struct ctp_emitter *e, uint32_t pid, uint32_t ppid, const char *strings,
		      size_t len, uint32_t argc, int stack_depth);

/* A `coro` line. Zero means unknown (null) for kind, entry_addr, parent, tid and stack;
 * has_ts says whether ts is known. */
struct ctp_coro_line {
	uint32_t pid;
	uint64_t coro;
	uint32_t kind;
	const char *entry; /* symbol, NULL when unknown */
	uint64_t entry_addr;
	uint64_t parent;
	uint32_t tid;
	bool has_ts;
	uint64_t ts;
	uint32_t stack;
};
void ctp_emit_coro(struct ctp_emitter *e, const struct ctp_coro_line *l);

void ctp_emit_switch(struct ctp_emitter *e, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t from,
		     uint64_t to, uint32_t how, uint32_t stack);

/* frames[i] is the address, syms[i] what it symbolized to; reaches_start: the outermost frame is
 * where a makecontext coroutine started (ctp_view_frames_as_untraced). */
void ctp_emit_stack(struct ctp_emitter *e, uint32_t pid, uint32_t id, bool reaches_start,
		    const uint64_t *frames, const struct ctp_sym *const *syms, uint32_t n);

void ctp_emit_loss(struct ctp_emitter *e, uint32_t pid, uint32_t tid, uint64_t count,
		   const char *why);

/* An `fd` line: an fd event of one coroutine. waiter 0, epfd < 0 and stack 0 are null. */
struct ctp_fd_line {
	uint32_t pid;
	uint32_t tid;
	uint64_t ts;
	uint64_t coro;
	int32_t fd;
	uint32_t event; /* enum ctp_fd_event */
	uint32_t op;	/* enum ctp_wait_op */
	uint64_t waiter;
	int64_t epfd;
	uint32_t stack;
};
void ctp_emit_fd(struct ctp_emitter *e, const struct ctp_fd_line *l);

struct ctp_state_line {
	uint32_t pid;
	uint64_t coro;
	uint32_t state; /* enum ctp_coro_state */
	uint32_t tid;	/* 0 = unknown */
	bool has_since;
	uint64_t since;
	uint32_t stack; /* 0 = null */
	uint64_t switches;
	int32_t wait_fd;  /* -1 = nothing known */
	uint32_t wait_op; /* the station's, packed: CTP_WAIT_* in ctp/segment.h */
};
void ctp_emit_state(struct ctp_emitter *e, const struct ctp_state_line *l);

/* A `coro_end` line: how (enum ctp_end_how) and when a coroutine ended. tid 0 is unknown;
 * switch_how (enum ctp_switch_how) says which switch ended it, for CTP_END_ENDED. */
struct ctp_coro_end_line {
	uint32_t pid;
	uint64_t coro;
	uint32_t tid;
	bool has_ts;
	uint64_t ts;
	uint32_t how;
	uint32_t switch_how;
};
void ctp_emit_coro_end(struct ctp_emitter *e, const struct ctp_coro_end_line *l);

/* One frame of a stack as the trace writes it: {"addr", "sym", "off", "module", "file",
 * "line"} (docs/trace-format.md, `stack`). */
void ctp_emit_frame_json(struct ctp_jsonw *w, uint64_t addr, const struct ctp_sym *s);

/* A `module` line: an object loaded in process pid, so that a reader can symbolize later. */
void ctp_emit_module(struct ctp_emitter *e, uint32_t pid, const struct ctp_module_copy *m);

enum ctp_exit_how {
	CTP_EXITED_UNKNOWN = 0, /* "status": null */
	CTP_EXITED_STATUS = 1,
	CTP_EXITED_SIGNAL = 2,
};
struct ctp_exit_line {
	uint32_t pid;
	uint64_t ts; /* when it ended (trace clock), 0 = unknown */
	enum ctp_exit_how how;
	int value;		 /* status or signal number */
	uint32_t tid;		 /* 0 = unknown */
	uint64_t coro;		 /* 0 = unknown */
	uint64_t addr;		 /* fault address, 0 = unknown */
	const uint64_t *running; /* coroutines found running, when the crash one is unknown */
	size_t nrunning;
	uint32_t stack; /* the crashing coroutine's stack at the fault (a stack line), 0 = none */
};
void ctp_emit_exit(struct ctp_emitter *e, const struct ctp_exit_line *l);

/* A `snapshot` line: the state lines of `pid` that follow it are every live coroutine of the
 * running process as it was from `ts` on (ctp-pstack; the collector on SIGUSR1). */
void ctp_emit_snapshot(struct ctp_emitter *e, uint32_t pid, uint64_t ts);

/* The same with `states`: exactly that many `state` lines of `pid` follow, so that a reader of
 * a live trace knows when it has the whole snapshot (ctp-cat --follow --report). */
void ctp_emit_snapshot_counted(struct ctp_emitter *e, uint32_t pid, uint64_t ts, uint64_t states);

/* The `end` line, last: the lines written and lost so far. */
void ctp_emit_end(struct ctp_emitter *e);

#endif

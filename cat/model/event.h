/* One trace line, decoded once into typed fields (docs/trace-format.md): every view, filter,
 * export and the analysis read these, never the line's JSON, so that they cannot read a field
 * differently. Each line type has its own part below; fields a line does not carry are 0, NULL
 * or -1 as said, and `has_*` flags mark the few numbers for which 0 is a real value.
 *
 * Strings: names of the contract's enums point to static words; symbols, modules, files, kinds
 * and executables are interned (they live as long as the decoder); `argv`, `tool`, `why` and
 * any unknown word are valid until the next line only.
 *
 * The end of a coroutine is one event for every reader: a `coro_end` line in format 2, or one
 * the decoder derives from a format 1 trace (see ctp_event_decoder_next). */
#ifndef CTP_CAT_MODEL_EVENT_H
#define CTP_CAT_MODEL_EVENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/model/idmap.h"
#include "cat/model/strings.h"
#include "ctp/names.h"
#include "cat/reader/trace_reader.h"

enum ctp_event_type {
	CTP_EV_UNKNOWN, /* a line type this version does not know (or none): see `json` */
	CTP_EV_TRACE,
	CTP_EV_PROCESS,
	CTP_EV_CORO,
	CTP_EV_SWITCH,
	CTP_EV_STACK,
	CTP_EV_LOSS,
	CTP_EV_FD,
	CTP_EV_STATE,
	CTP_EV_CORO_END,
	CTP_EV_EXIT,
	CTP_EV_END,
	CTP_EV_SNAPSHOT, /* the state lines that follow are a live look at pid at ts (ctp-pstack) */
	CTP_EV_MODULE,	 /* an object loaded in pid: what re-symbolizing needs */
};

struct ctp_event_frame {
	uint64_t addr;
	const char *sym; /* NULL if unknown */
	bool has_off;
	uint64_t off;
	const char *module, *file; /* NULL if unknown */
	int line;		   /* 0 if unknown */
	/* For a frame without a name: its address in its module's file (addr less the module's
	 * load bias, what addr2line takes), when a `module` line of the trace holds the frame. Set
	 * by the namer, which looks only at such frames: a trace's modules are searched in a line,
	 * and most frames are named. */
	bool has_module_off;
	uint64_t module_off;
};

enum ctp_event_exit { CTP_EXIT_LINE_UNKNOWN, CTP_EXIT_LINE_STATUS, CTP_EXIT_LINE_SIGNAL };

struct ctp_event {
	enum ctp_event_type type;
	const char *type_name; /* the line's `type`, "" when it has none */
	/* The line it was decoded from; NULL for an event the decoder derived (format 1 ends). */
	const struct ctp_trace_line *line;
	/* Fields many types share: 0 when the line has none. */
	uint32_t pid, tid;
	uint64_t ts;
	uint64_t coro;	/* coro, state, fd, coro_end, exit: the coroutine */
	uint32_t stack; /* coro, switch, fd, state, exit: a stack id */

	struct {
		int version;
		const char *tool;
		uint64_t start;
	} trace;
	struct {
		bool has_ppid;
		uint32_t ppid;
		const char *exe;
		const char *const *argv;
		size_t argc;
		int stack_depth; /* -1 unknown (format 1) */
	} process;
	struct {
		uint32_t kind; /* enum ctp_coro_kind, 0 unknown */
		const char *kind_name;
		const char *entry;
		uint64_t entry_addr, parent;
	} coro_line;
	struct {
		uint64_t from, to;
		uint32_t how; /* enum ctp_switch_how, 0 unknown */
		const char *how_name;
	} sw;
	struct {
		uint32_t id;
		size_t nframes;
		const struct ctp_event_frame *frames; /* innermost first */
		bool reaches_start; /* the outermost frame is a makecontext coroutine's start */
	} stack_line;
	struct {
		const char *path, *build_id; /* build_id in hex, NULL if none */
		uint64_t bias, lo, hi;
	} module_line;
	struct {
		bool has_count;
		uint64_t count;
		const char *why;
	} loss;
	struct {
		int fd;		/* -1 if none */
		uint32_t event; /* enum ctp_fd_event, 0 unknown */
		const char *event_name;
		uint32_t op; /* enum ctp_wait_op, 0 none */
		const char *op_name;
		uint64_t waiter;
		int64_t epfd; /* -1 if none */
	} fd;
	struct {
		uint32_t state; /* enum ctp_coro_state (CTP_STATE_FREE: unknown) */
		const char *state_name;
		uint64_t since;
		bool has_switches;
		uint64_t switches;
		int wait_fd; /* -1: waits on nothing known */
		uint32_t wait_op;
		const char *wait_op_name;
		int wait_closed; /* 1, 0, or -1 unknown */
	} state;
	struct {
		uint32_t how; /* enum ctp_end_how */
		const char *how_name;
		uint32_t switch_how; /* for CTP_END_ENDED: enum ctp_switch_how */
		const char *switch_name;
	} coro_end;
	struct {
		enum ctp_event_exit kind;
		int value; /* status or signal */
		uint64_t addr;
		const uint64_t *running; /* coroutines running when the crashing one is unknown */
		size_t nrunning;
	} exit;
	struct {
		bool has_lines;
		uint64_t lines, lost, unwritten;
	} end;
	struct {
		/* How many `state` lines of pid follow (the collector's count); without it
		 * (ctp-pstack's snapshot), the states end at the next line that is not one of them.
		 */
		bool has_states;
		uint64_t states;
	} snapshot;
	const json_t *json; /* the parsed line, for CTP_EV_UNKNOWN (NULL for derived events) */
};

/* Decodes a trace's lines in order, and derives what format 1 leaves to guess. */
struct ctp_event_decoder {
	struct ctp_strings strings;
	int version; /* of the trace header, once seen */
	/* Format 1: coroutines whose end was derived from a `return` switch, (pid, coro). */
	struct ctp_idmap ended_v1;
	/* Scratch reused from line to line: a flat line's strings made C strings, the tree of a
	 * flat line of unknown type. */
	char *scratch;
	size_t cap_scratch, scratch_used;
	json_t *unknown_json;
	struct ctp_event_frame *frames;
	size_t cap_frames;
	const char **argv;
	size_t cap_argv;
	uint64_t *running;
	size_t cap_running;
	struct ctp_event derived;
	bool have_derived;
	/* Optional: who fills in names the trace left out (cat/model/resymbolize.h); NULL: none. */
	const struct ctp_event_namer *namer;
	void *namer_state;
};

/* Fills in names a trace left out, from its `module` lines: `module` takes each such line (-1
 * when out of memory), `frame` names a frame without a name, or else places it in its module
 * (module_off), `entry` returns the name of an entry address (or NULL). A hook rather than a call,
 * so that what decodes (the fuzz target among others) does not need the symbolizer. */
struct ctp_event_namer {
	int (*module)(void *state, const struct ctp_event *module_line);
	void (*frame)(void *state, uint32_t pid, struct ctp_event_frame *fr);
	const char *(*entry)(void *state, uint32_t pid, uint64_t addr);
};

void ctp_event_decoder_init(struct ctp_event_decoder *d);
void ctp_event_decoder_free(struct ctp_event_decoder *d);

/* Decodes `line` into `ev`. Returns 0, or -1 when out of memory. */
int ctp_event_decode(struct ctp_event_decoder *d, const struct ctp_trace_line *line,
		     struct ctp_event *ev);

/* After ctp_event_decode: an event to hand on *before* `ev`, when there is one (a format 1
 * trace's derived coroutine end: `returned` before a `return` switch, `unknown` before a final
 * `state` of `exited` with no end before it). NULL when there is none. */
const struct ctp_event *ctp_event_derived(struct ctp_event_decoder *d);

/* The coroutine ids an event names (coro, from, to, parent, waiter): fills `ids`, returns how
 * many (at most 5). */
size_t ctp_event_coros(const struct ctp_event *ev, uint64_t ids[5]);

#endif

/* Configuration and process-wide state (init.c): whether the process traces, its settings from
 * the CTP_* variables, its clock, and messages on stderr. */
#ifndef CTP_PRELOAD_PROCESS_H
#define CTP_PRELOAD_PROCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/clock.h"
#include "preload/compiler.h"

struct ctp_config {
	uint32_t stack_depth;	  /* CTP_STACK_DEPTH, 0 = no stacks */
	bool stacks_every_switch; /* CTP_STACKS=every-switch: unwind on the switch itself */
	uint64_t ring_bytes;	  /* CTP_RING_KB, rounded to a power of two */
	uint64_t segment_max;	  /* CTP_SEGMENT_MAX_MB */
	const char *socket_path;  /* CTP_SOCKET */
	uint64_t first_coro_id;	  /* CTP_CORO_BASE, set by the image before an exec */
};

enum ctp_process_state {
	CTP_PROC_UNINIT = 0,
	CTP_PROC_INITIALIZING = 1,
	CTP_PROC_TRACING = 2,
	CTP_PROC_OFF = 3, /* not configured, or tracing stopped for good */
};

struct ctp_process {
	int state; /* enum ctp_process_state; atomic */
	uint32_t pid;
	/* A fork child's parent, for its hello: getppid() names init or a subreaper once the
	 * parent has exited, and the collector matches the child to its parent's FORKED notice.
	 * 0: not a fork child. */
	uint32_t forked_from;
	/* The collector's pid (the peer of the connection), 0 if unknown: named as ptracer under
	 * Yama (connection.c), and handed across an exec with the connection. */
	int collector_pid;
	/* The program's arguments as the dynamic loader handed them to the constructor: what the
	 * hello names where /proc/self/cmdline cannot be opened (no fd free). NULL when a hook
	 * started tracing before the constructor ran. */
	char *const *argv;
	bool use_tsc;
	struct ctp_config config;
};

extern struct ctp_process ctp_proc CTP_HIDDEN;

/* Makes sure the process is initialised (hooks can run before the constructor). Returns true
 * when tracing is on. */
CTP_HIDDEN bool ctp_process_ready(void);
/* Stops tracing for good (the collector is gone, the segment is full of errors...). */
CTP_HIDDEN void ctp_process_stop(const char *why);

static inline uint64_t ctp_now(void)
{
	return ctp_proc.use_tsc ? ctp_tsc() : ctp_monotonic_ns();
}

/* Writes "ctp: " a b c on stderr without stdio or malloc, usable from any hook; nothing once fd
 * 2 is no longer the file it was at the preload's start (log.c). NULL parts are left out. */
CTP_HIDDEN void ctp_log(const char *a, const char *b, const char *c);
/* Takes fd 2's identity, as the preload starts. */
CTP_HIDDEN void ctp_log_take_stderr(void);

#endif

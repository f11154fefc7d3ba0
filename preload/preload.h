/* Internal interfaces of libctp_preload.so. Nothing here is exported: the library is built with
 * -fvisibility=hidden and only the hooked functions are visible. */
#ifndef CTP_PRELOAD_H
#define CTP_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ctp/clock.h"
#include "ctp/ring.h"
#include "ctp/segment.h"

#define CTP_HIDDEN __attribute__((visibility("hidden")))
#define CTP_EXPORT __attribute__((visibility("default")))
#define CTP_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define CTP_NO_STATION UINT32_MAX

/* ---- configuration and process-wide state (init.c) ---- */

struct ctp_config {
	uint32_t stack_depth;	 /* CTP_STACK_DEPTH, 0 = no stacks */
	uint64_t ring_bytes;	 /* CTP_RING_KB, rounded to a power of two */
	uint64_t segment_max;	 /* CTP_SEGMENT_MAX_MB */
	const char *socket_path; /* CTP_SOCKET */
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

/* Writes a message on stderr without stdio or malloc: usable from any hook. */
CTP_HIDDEN void ctp_log(const char *a, const char *b, const char *c);

/* ---- the segment (segment.c) ---- */

struct ctp_segment {
	uint8_t *base;
	struct ctp_header *hdr;
	int memfd;
	uint64_t used; /* bytes handed out, under the growth lock */
	int lock;      /* growth lock: allocation only, never a switch */
};

extern struct ctp_segment ctp_seg CTP_HIDDEN;

CTP_HIDDEN bool ctp_segment_create(void);
/* Allocates `size` bytes (cache-line aligned, zeroed) for a block of `kind` and pushes it on the
 * block list after `fill` has initialised its body. Returns its offset, 0 on failure. */
CTP_HIDDEN uint64_t ctp_segment_alloc_block(uint32_t kind, uint64_t size,
					    void (*fill)(void *block, uint64_t off, void *arg),
					    void *arg);
/* After fork, in the child: a private copy of the segment mapped over the same range. */
CTP_HIDDEN bool ctp_segment_fork_child(void);

static inline void *ctp_segment_ptr(uint64_t off)
{
	return ctp_seg.base + off;
}

/* ---- stations (stations.c) ---- */

/* What the preload alone knows of a coroutine: how to start it. */
#define CTP_MAX_ENTRY_ARGS 16
struct ctp_coro_private {
	void (*fn)(void);
	int argc;
	void *link; /* uc_link at makecontext time: where glibc goes when fn returns */
	uint64_t args[CTP_MAX_ENTRY_ARGS];
};

/* Stations come in chunks of a power of two, fixed at build time: finding one is on every
 * switch, and a division by a value read from the header would cost more than the lookup. */
#define CTP_STATION_CHUNK_SHIFT 10
#define CTP_STATION_MAX_CHUNKS (1 << 16)

struct ctp_station_dir {
	uint8_t *chunk[CTP_STATION_MAX_CHUNKS]; /* station 0 of each chunk; release/acquire */
	struct ctp_coro_private *priv[CTP_STATION_MAX_CHUNKS];
	uint32_t station_size; /* header.station_size, kept where the switch path reads it */
	/* Free list head: index + 1 in the low 32 bits (0 = empty), a tag in the high 32 bits so
	 * that a pop racing with pop+push of the same index fails (ABA). */
	uint64_t free_head;
};
extern struct ctp_station_dir ctp_station_dir CTP_HIDDEN;

static inline struct ctp_station *ctp_station_at(uint32_t idx)
{
	uint8_t *chunk = __atomic_load_n(&ctp_station_dir.chunk[idx >> CTP_STATION_CHUNK_SHIFT],
					 __ATOMIC_ACQUIRE);
	uint32_t slot = idx & ((1u << CTP_STATION_CHUNK_SHIFT) - 1);
	return (struct ctp_station *)(chunk + (uint64_t)slot * ctp_station_dir.station_size);
}

CTP_HIDDEN void ctp_stations_init(void);
CTP_HIDDEN uint32_t ctp_station_alloc(void);
CTP_HIDDEN void ctp_station_free(uint32_t idx);
CTP_HIDDEN struct ctp_coro_private *ctp_station_private(uint32_t idx);
/* Calls fn for every station index handed out so far (slow: fork, lookups that missed). */
CTP_HIDDEN void ctp_stations_each(void (*fn)(uint32_t idx, struct ctp_station *s, void *arg),
				  void *arg);
CTP_HIDDEN void ctp_stations_fork_child(void);

/* ---- threads (threads.c) ---- */

enum ctp_thread_state {
	CTP_THREAD_NEW = 0,
	CTP_THREAD_TRACING = 1,
	CTP_THREAD_BUSY = 2, /* inside the preload already: pass through */
	CTP_THREAD_OFF = 3,  /* exited, or no ring could be had */
};

struct ctp_thread {
	int state;
	uint32_t tid;
	uint32_t current;	     /* station of the coroutine running on this thread */
	uint32_t self;		     /* station of the thread's own stack */
	uint64_t stack_lo, stack_hi; /* the thread's own stack */
	uint64_t entry_hint;	     /* start routine, when the thread came from pthread_create */
	/* The last two stack pages resolved to coroutine stations: a scheduler switches between
	 * few contexts at a time, and this skips the stack map for them. */
	uint64_t lookup_page[2];
	uint32_t lookup_idx[2];
	uint32_t lookup_next;
	struct ctp_ring_producer ring;
};

/* The calling thread's state, initialised on first use; NULL when this thread cannot trace.
 * Must be called again after any switch returns: the coroutine may now run on another thread. */
CTP_HIDDEN struct ctp_thread *ctp_thread_get(void);
CTP_HIDDEN void ctp_threads_fork_child(void);

/* ---- rings (rings.c) ---- */

/* Takes a ring for thread t and announces the thread (THREAD record with its coroutine id). */
CTP_HIDDEN bool ctp_ring_attach(struct ctp_thread *t, uint64_t thread_coro);
CTP_HIDDEN void ctp_ring_detach(struct ctp_thread *t);
/* Room for a record; NULL when dropped (counted). Finish with ctp_emit_commit. */
static inline void *ctp_emit_reserve(struct ctp_thread *t, uint32_t size)
{
	return ctp_ring_reserve(&t->ring, size);
}
CTP_HIDDEN void ctp_emit_commit(struct ctp_thread *t);
CTP_HIDDEN void ctp_rings_fork_child(struct ctp_thread *t);

/* ---- coroutine events (events.c): a ring record and the station update that go together ---- */

static inline uint64_t ctp_coro_new_id(void)
{
	return __atomic_fetch_add(&ctp_seg.hdr->next_coro_id, 1, __ATOMIC_RELAXED);
}
/* New coroutine `coro` in station `idx` (already allocated): fills the station and emits CREATE
 * with the creation stack (`skip` frames of the preload's own). */
CTP_HIDDEN void ctp_coro_begin(struct ctp_thread *t, uint32_t idx, uint64_t coro, uint32_t kind,
			       uint64_t entry, uint64_t stack_lo, uint64_t stack_hi, uint32_t state,
			       uint32_t skip);
/* A switch on thread t from t->current to `to`: suspend stack of the current coroutine (`skip`
 * frames of the preload's own), both stations, the SWITCH record; t->current becomes `to`. */
CTP_HIDDEN void ctp_coro_switch(struct ctp_thread *t, uint32_t to, uint32_t how, uint32_t skip);
/* The current coroutine of t ends (how = the switch that ends it): EXIT record, station exited;
 * then the switch to `to`, without a suspend stack. The station is recycled. */
CTP_HIDDEN void ctp_coro_end_and_switch(struct ctp_thread *t, uint32_t to, uint32_t how);
/* Ends the coroutine in station idx that is not running (its stack was reused). */
CTP_HIDDEN void ctp_coro_abandon(struct ctp_thread *t, uint32_t idx);

/* ---- stacks: where a stack pointer belongs (stackmap.c) and unwinding (unwind.c) ---- */

CTP_HIDDEN void ctp_stackmap_add(uint32_t idx, uint64_t lo, uint64_t hi);
CTP_HIDDEN void ctp_stackmap_remove(uint32_t idx, uint64_t lo, uint64_t hi);
/* The coroutine station whose stack holds `sp`, or CTP_NO_STATION. */
CTP_HIDDEN uint32_t ctp_stackmap_find(uint64_t sp);
/* The station a switch to a context whose stack pointer is `sp` resumes: a coroutine's, else
 * the thread whose own stack holds it (this thread's when none is known). */
CTP_HIDDEN uint32_t ctp_station_for_sp(struct ctp_thread *t, uint64_t sp);

CTP_HIDDEN void ctp_unwind_init(void);
/* Fills up to `max` return addresses of the caller's caller (skipping `skip` frames of the
 * preload's own); returns how many. */
CTP_HIDDEN uint32_t ctp_unwind(uint64_t *frames, uint32_t max, uint32_t skip);

/* ---- modules (modules.c) and the collector connection (connection.c) ---- */

CTP_HIDDEN void ctp_modules_scan(void);
CTP_HIDDEN bool ctp_connection_open(void);
CTP_HIDDEN void ctp_connection_wake(void);
CTP_HIDDEN void ctp_connection_send_exec(void);

/* ---- process end (crash.c) ---- */

CTP_HIDDEN void ctp_crash_handlers_install(void);
CTP_HIDDEN void ctp_crash_altstack_for_thread(void);
CTP_HIDDEN void ctp_record_exit_status(int status);

#endif

/* Internal interfaces of libctp_preload.so. Nothing here is exported: the library is built with
 * -fvisibility=hidden and only the hooked functions are visible. */
#ifndef CTP_PRELOAD_H
#define CTP_PRELOAD_H

#include <errno.h>
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
	uint64_t first_coro_id;	 /* CTP_CORO_BASE, set by the image before an exec */
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

/* One piece of the segment file mapped into the process (see segment.c). */
struct ctp_extent {
	uint64_t off, size; /* file range */
	uint8_t *base;	    /* where it is mapped */
};
enum { CTP_MAX_EXTENTS = 64 };

struct ctp_segment {
	struct ctp_header *hdr;
	int memfd;
	uint64_t used;	 /* bytes handed out, under the growth lock */
	uint64_t mapped; /* bytes of all extents, under the growth lock */
	int lock;	 /* growth lock: allocation only, never a switch */
	uint32_t extent_count;
	struct ctp_extent extents[CTP_MAX_EXTENTS];
};

extern struct ctp_segment ctp_seg CTP_HIDDEN;

CTP_HIDDEN bool ctp_segment_create(void);
/* Allocates `size` bytes (cache-line aligned, zeroed) for a block of `kind` and pushes it on the
 * block list after `fill` has initialised its body. Returns its offset, 0 on failure. */
CTP_HIDDEN uint64_t ctp_segment_alloc_block(uint32_t kind, uint64_t size,
					    void (*fill)(void *block, uint64_t off, void *arg),
					    void *arg);
/* After fork, in the child: a private copy of the segment mapped over the same ranges. */
CTP_HIDDEN bool ctp_segment_fork_child(void);
/* Where the byte at offset off is mapped (slow: allocation and block walks only). */
CTP_HIDDEN void *ctp_segment_ptr(uint64_t off);

/* ---- stations (stations.c) ---- */

/* What the preload alone knows of a coroutine (per station, private memory). */
struct ctp_coro_private {
	void *start_data; /* fcontext: the data of its first resume (Boost: its record) */
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
CTP_HIDDEN void ctp_stations_fork_child(void);
CTP_HIDDEN uint32_t ctp_station_alloc(void);
CTP_HIDDEN void ctp_station_free(uint32_t idx);
CTP_HIDDEN struct ctp_coro_private *ctp_station_private(uint32_t idx);
/* Calls fn for every station index handed out so far (slow: fork, lookups that missed). */
CTP_HIDDEN void ctp_stations_each(void (*fn)(uint32_t idx, struct ctp_station *s, void *arg),
				  void *arg);

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
	/* The last page resolved to this thread's own station (its own stack, or a stack nobody
	 * registered), good while no stack was registered since (the stack map's generation):
	 * switches back to the thread skip the map. */
	uint64_t own_page;
	uint64_t own_gen;
	struct ctp_ring_producer ring;
	void *altstack; /* the signal stack the preload gave this thread, if any */
	/* Between vfork and the child's exec or exit, the child runs on this thread's memory:
	 * in_vfork_child is set and state is BUSY, so that every hook passes through. */
	int vfork_saved_state;
	uint8_t in_vfork_child;
};

/* This thread's state, without starting it. For flags that are read and used between two
 * switches only; anything that spans a switch goes through ctp_thread_get. */
extern __thread struct ctp_thread ctp_tls_thread CTP_HIDDEN
	__attribute__((tls_model("initial-exec")));

/* Whether the code running now is a vfork child in its parent's memory (see vfork.c). */
static inline bool ctp_in_vfork_child(void)
{
	return __atomic_load_n(&ctp_tls_thread.in_vfork_child, __ATOMIC_RELAXED);
}

/* The calling thread's state, initialised on first use; NULL when this thread cannot trace.
 * Must be called again after any switch returns: the coroutine may now run on another thread. */
CTP_HIDDEN struct ctp_thread *ctp_thread_get(void);

/* While a thread updates its stations and ring, hooks it reaches (libunwind's own reads of a
 * pipe, a signal handler that does I/O) must pass through, or they would write into the ring
 * in the middle of a record. ctp_thread_get returns NULL for a busy thread. */
static inline int ctp_thread_enter(struct ctp_thread *t)
{
	int previous = t->state;
	t->state = CTP_THREAD_BUSY;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return previous;
}

static inline void ctp_thread_leave(struct ctp_thread *t, int previous)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->state = previous;
}
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
CTP_HIDDEN void ctp_emit_wake_if_full(struct ctp_thread *t);

/* Publishes the record; wakes a sleeping collector only when the ring fills up (CTP.md
 * "Wakeup"). Inline: it runs for every record, the wake path almost never. */
static inline void ctp_emit_commit(struct ctp_thread *t)
{
	ctp_ring_commit(&t->ring);
	if (CTP_UNLIKELY(ctp_ring_fill(&t->ring) > (t->ring.mask + 1) / 2))
		ctp_emit_wake_if_full(t);
}
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
/* A switch at `now` on thread t from t->current to `to`: suspend stack of the current coroutine
 * (`skip` frames of the preload's own), both stations, the SWITCH record; t->current becomes
 * `to`. Hooks read the clock before they look the target up, so that the clock's latency (the
 * largest single cost of a switch) overlaps the lookup. */
CTP_HIDDEN void ctp_coro_switch(struct ctp_thread *t, uint32_t to, uint32_t how, uint32_t skip,
				uint64_t now);
/* The same switch, the current coroutine leaving without having saved itself (a setcontext with
 * no getcontext since it was resumed): its station stays, in state LEFT. */
CTP_HIDDEN void ctp_coro_leave(struct ctp_thread *t, uint32_t to, uint32_t how, uint32_t skip,
			       uint64_t now);
/* Set by the getcontext hook, cleared when a coroutine is resumed (ucontext_hooks.c). */
extern __thread uint8_t ctp_context_saved CTP_HIDDEN __attribute__((tls_model("initial-exec")));
/* The same switch without a suspend stack: the hook runs on the target side already. */
CTP_HIDDEN void ctp_coro_switch_nostack(struct ctp_thread *t, uint32_t to, uint32_t how);
/* The current coroutine of t ends (how = the switch that ends it): EXIT record, station exited;
 * then the switch to `to`, without a suspend stack. The station is recycled. */
CTP_HIDDEN void ctp_coro_end_and_switch(struct ctp_thread *t, uint32_t to, uint32_t how);
/* Ends the coroutine in station idx that is not running (its stack was reused). */
CTP_HIDDEN void ctp_coro_abandon(struct ctp_thread *t, uint32_t idx);
/* The thread t ends: EXIT record for its own coroutine, whose station goes back to the pool. */
CTP_HIDDEN void ctp_thread_end(struct ctp_thread *t);

/* ---- stacks: where a stack pointer belongs (stackmap.c) and unwinding (unwind.c) ---- */

CTP_HIDDEN void ctp_stackmap_add(uint32_t idx, uint64_t lo, uint64_t hi);
/* Notes that a coroutine's stack starts at lo, so that freeing that block ends the coroutine
 * (stack_release.c). */
CTP_HIDDEN void ctp_stack_base_note(uint64_t lo);
CTP_HIDDEN void ctp_stackmap_remove(uint32_t idx, uint64_t lo, uint64_t hi);
/* A stack is made anew over [lo, hi): every coroutine whose stack overlaps it is gone for good
 * (programs reuse stacks, and allocators hand out ranges that overlap old ones partly). */
CTP_HIDDEN void ctp_stackmap_retire_overlapping(struct ctp_thread *t, uint64_t lo, uint64_t hi);
/* The coroutine station whose stack holds `sp`, or CTP_NO_STATION. */
CTP_HIDDEN uint32_t ctp_stackmap_find(uint64_t sp);
CTP_HIDDEN uint32_t ctp_station_for_sp_slow(struct ctp_thread *t, uint64_t sp);
/* Threads' own stacks, found by the slow path of a lookup (stackmap.c). */
CTP_HIDDEN void ctp_thread_stacks_add(uint32_t idx);
CTP_HIDDEN void ctp_thread_stacks_remove(uint32_t idx);
extern uint64_t ctp_stackmap_generation CTP_HIDDEN;

/* Whether station idx is a live coroutine whose stack overlaps [lo, hi). */
static inline bool ctp_station_live_over(uint32_t idx, uint64_t lo, uint64_t hi)
{
	struct ctp_station *s = ctp_station_at(idx);
	uint32_t state = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
	return state != CTP_STATE_FREE && state != CTP_STATE_EXITED &&
	       __atomic_load_n(&s->stack_lo, __ATOMIC_RELAXED) < hi &&
	       lo < __atomic_load_n(&s->stack_hi, __ATOMIC_RELAXED);
}

/* Whether station idx is a live coroutine whose stack holds addr. */
static inline bool ctp_station_holds(uint32_t idx, uint64_t addr)
{
	return ctp_station_live_over(idx, addr, addr + 1);
}

/* The station a switch to a context whose stack pointer is `sp` resumes: a coroutine's, else
 * the thread whose own stack holds it (this thread's when none is known). The thread's last
 * answers are checked inline, on every switch; the stack map only when they do not hold. */
static inline uint32_t ctp_station_for_sp(struct ctp_thread *t, uint64_t sp)
{
	uint64_t page = sp >> 12;
	for (int k = 0; k < 2; k++)
		if (t->lookup_page[k] == page && ctp_station_holds(t->lookup_idx[k], sp))
			return t->lookup_idx[k];
	if (t->own_page == page &&
	    t->own_gen == __atomic_load_n(&ctp_stackmap_generation, __ATOMIC_ACQUIRE))
		return t->self;
	return ctp_station_for_sp_slow(t, sp);
}

CTP_HIDDEN void ctp_unwind_init(void);
/* libunwind's own fds (unwind_fds.c): its address range, and whether a call comes from it. */
CTP_HIDDEN void ctp_unwinder_note(const void *symbol);
CTP_HIDDEN bool ctp_called_from_unwinder(const void *return_address);
/* Fills up to `max` return addresses of the caller's caller (skipping `skip` frames of the
 * preload's own); returns how many. */
CTP_HIDDEN uint32_t ctp_unwind(uint64_t *frames, uint32_t max, uint32_t skip);

/* ---- modules (modules.c) and the collector connection (connection.c) ---- */

/* Brings the module table up to date if objects were loaded since it last was. */
CTP_HIDDEN void ctp_modules_scan(void);
CTP_HIDDEN void ctp_modules_fork_child(void);
CTP_HIDDEN bool ctp_connection_open(void);
CTP_HIDDEN void ctp_connection_wake(void);
CTP_HIDDEN void ctp_connection_send_exec(void);

/* ---- the preload's own fds (own_fds.c): for the close/close_range/dup2/dup3 hooks ---- */

/* Registers the variable holding one of the preload's fds, or notes that it holds a new file. */
CTP_HIDDEN void ctp_own_fd_register(int *slot);
/* Whether fd is one of ours (checked by the file's identity, not the number alone). */
CTP_HIDDEN bool ctp_own_fd(int fd);
/* Whether the fd in a registered slot is still ours; sets the slot to -1 when it is not. */
CTP_HIDDEN bool ctp_own_fd_valid(int *slot);
/* Moves a new fd of the preload's out of the range programs use (>= 900), close-on-exec. */
CTP_HIDDEN int ctp_own_fd_move_high(int fd);
/* Before a dup2/dup3 onto `target`: if it is one of ours, ours moves elsewhere first. */
CTP_HIDDEN void ctp_own_fd_make_room(int target);
/* close_range(first, last, flags) over everything in the range but the preload's own fds. */
CTP_HIDDEN int ctp_own_fd_close_range(unsigned first, unsigned last, int flags,
				      int (*real_close_range)(unsigned, unsigned, int));

/* ---- the plain LD_PRELOAD form (autostart.c) ---- */

/* Starts a collector of the process's own when CTP_SOCKET is not set. */
CTP_HIDDEN bool ctp_autostart_collector(void);

/* ---- children (exec_hooks.c) ---- */

/* Keeps the CTP_* variables and the preload's path for children's environments. */
CTP_HIDDEN void ctp_exec_remember_environment(void);

/* ---- fd attribution (fd_table.c, io_*.c) ---- */

/* What the preload knows of one fd number: the coroutine that last got EAGAIN on it (a hint;
 * its station says whether it still waits) and which readiness APIs name it. */
enum {
	CTP_FD_WATCH_EPOLL = 1,	 /* registered with epoll_ctl ADD/MOD */
	CTP_FD_WATCH_POLL = 2,	 /* named in a poll or select call */
	CTP_FD_WATCH_SEEN = 4,	 /* some coroutine waited on it */
	CTP_FD_WATCH_POLLER = 8, /* coroutine `probe` polls it each time it runs: no waiter */
};
struct ctp_fd_slot {
	uint64_t waiter;  /* coroutine id, 0 = none */
	uint32_t station; /* its station index + 1, 0 = none */
	uint8_t op;	  /* enum ctp_wait_op */
	uint8_t watch;	  /* CTP_FD_WATCH_* */
	uint16_t pad;
	uint32_t probe; /* station + 1 of the last coroutine to probe it with a zero-timeout poll */
	uint32_t probe_run; /* that station's switch count then: which run of it probed */
};
struct ctp_fd_table {
	struct ctp_fd_slot *slots; /* private mapping, made on first need; release/acquire */
	uint32_t count;		   /* fds covered: RLIMIT_NOFILE's hard limit, capped */
	uint32_t high;		   /* one past the highest fd ever given state */
};
extern struct ctp_fd_table ctp_fd_table CTP_HIDDEN;

/* The slot of fd, NULL when there is no table yet or fd is beyond it. */
static inline struct ctp_fd_slot *ctp_fd_slot(int fd)
{
	struct ctp_fd_slot *slots = __atomic_load_n(&ctp_fd_table.slots, __ATOMIC_ACQUIRE);
	if (!slots || (unsigned)fd >= ctp_fd_table.count)
		return NULL;
	return &slots[fd];
}
/* Like ctp_fd_slot, making the table first; notes fd in the high-water mark. */
CTP_HIDDEN struct ctp_fd_slot *ctp_fd_slot_make(int fd);
/* Forgets everything about fd (it was closed, or now names another file). */
CTP_HIDDEN void ctp_fd_slot_reset(struct ctp_fd_slot *s);

/* epoll data -> fd, so that epoll_wait results can be attributed (io_epoll_keys.c). */
CTP_HIDDEN void ctp_epoll_key_set(uint64_t data, int fd);
CTP_HIDDEN int ctp_epoll_key_find(uint64_t data);

/* The rare paths of the I/O hooks (io_record.c). Each keeps errno and records nothing on a
 * thread that is not tracing. Called straight from a hook, so that the stack they record
 * starts at the hook's caller. */
CTP_HIDDEN void ctp_io_would_block(int fd, uint32_t op);
CTP_HIDDEN void ctp_io_succeeded(int fd, struct ctp_fd_slot *s);
/* Before the program closes fd (or dup2s over it): what is known of fd now... */
struct ctp_fd_closing {
	uint64_t waiter;
	uint32_t station;
	uint8_t op;
	uint8_t watch;
};
static inline bool ctp_io_close_begin(int fd, struct ctp_fd_closing *c)
{
	struct ctp_fd_slot *s = ctp_fd_slot(fd);
	if (!s)
		return false;
	c->watch = __atomic_load_n(&s->watch, __ATOMIC_RELAXED);
	c->station = __atomic_load_n(&s->station, __ATOMIC_RELAXED);
	c->waiter = __atomic_load_n(&s->waiter, __ATOMIC_RELAXED);
	c->op = __atomic_load_n(&s->op, __ATOMIC_RELAXED);
	return c->watch || c->station;
}
/* ...and after it was closed: the CLOSE record, the waiter's station marked closed. */
CTP_HIDDEN void ctp_io_close_end(int fd, const struct ctp_fd_closing *c);
/* An fd that epoll, poll or select reported ready: a READY record if a coroutine waits on it. */
CTP_HIDDEN void ctp_io_ready(int fd, struct ctp_fd_slot *s);
/* epoll_ctl succeeded: REGISTER or UNREGISTER. */
CTP_HIDDEN void ctp_io_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);

/* After a read- or write-like call on fd returned rc, errno as it left it: nothing but two
 * loads unless the call would have blocked or fd has a waiter. */
static inline void ctp_io_after(int fd, long rc, uint32_t op)
{
	if (CTP_UNLIKELY(rc < 0)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			ctp_io_would_block(fd, op);
		return;
	}
	struct ctp_fd_slot *s = ctp_fd_slot(fd);
	if (CTP_UNLIKELY(s && __atomic_load_n(&s->station, __ATOMIC_RELAXED)))
		ctp_io_succeeded(fd, s);
}

/* ---- process end (crash.c) ---- */

CTP_HIDDEN void ctp_crash_handlers_install(void);
CTP_HIDDEN void ctp_crash_altstack_for_thread(struct ctp_thread *t);
CTP_HIDDEN void ctp_crash_altstack_release(struct ctp_thread *t);
/* Records the exit status at exit, also when main returns (glibc's exit is then not called
 * through the PLT, so the exit hooks alone would miss it). */
CTP_HIDDEN void ctp_exit_status_watch(void);

#endif

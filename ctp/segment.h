/* The cTP v2 shared-memory segment: the ABI between a traced process and the collector.
 *
 * One segment per traced process: a memfd that the process maps once at a fixed, reserved
 * address range and grows with ftruncate (never shrinks: it is sealed with F_SEAL_SHRINK), so
 * every pointer the preload holds into it stays valid for the life of the process. The
 * collector maps the same memfd and treats every byte of it as untrusted input: each offset and
 * length it reads is checked against its own mapping (see ctp_segment_view).
 *
 * The authoritative description, with the memory order of every publication, is ctp/CTP.md.
 * Every struct here has a fixed layout, checked by the static_asserts at the end. */
#ifndef CTP_SEGMENT_H
#define CTP_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#define CTP_MAGIC 0x434F524F54524352ull /* "COROTRCR", kept from cTP v1 */
#define CTP_VERSION 2u
#define CTP_CACHE_LINE 64u
#define CTP_MAX_STACK_DEPTH 64u
#define CTP_DEFAULT_STACK_DEPTH 16u

/* How timestamps in rings and stations are to be read (header.clock_kind). */
enum ctp_clock_kind {
	CTP_CLOCK_MONOTONIC_NS = 1, /* nanoseconds of CLOCK_MONOTONIC */
	CTP_CLOCK_TSC = 2,	    /* raw invariant TSC; the collector converts */
};

/* Where a process's life ended, as far as the process itself could record it
 * (header.exit_kind). The launcher's waitpid status, when it has one, wins. */
enum ctp_exit_kind {
	CTP_EXIT_NONE = 0,
	CTP_EXIT_STATUS = 1, /* exit()/_exit() with exit_value */
	CTP_EXIT_SIGNAL = 2, /* fatal signal exit_value, caught by the preload's handler */
};

struct ctp_header {
	/* 0x00 */ uint64_t magic;
	/* 0x08 */ uint32_t version;
	/* 0x0C */ uint32_t header_size;   /* sizeof(struct ctp_header) */
	/* 0x10 */ uint32_t station_count; /* stations ever handed out (high-water index) */
	/* 0x14 */ uint32_t sleep_flag;	   /* 1 while the collector sleeps; see CTP.md "Wakeup" */
	/* 0x18 */ uint32_t pid;
	/* 0x1C */ uint32_t clock_kind;	  /* enum ctp_clock_kind */
	/* 0x20 */ uint64_t segment_size; /* committed (ftruncated) bytes; grows, release */
	/* 0x28 */ uint64_t segment_max;  /* reserved address range; never exceeded */
	/* 0x30 */ uint64_t blocks_head;  /* offset of the newest block, 0 = none; release */
	/* 0x38 */ uint32_t station_size; /* bytes per station, multiple of CTP_CACHE_LINE */
	/* 0x3C */ uint32_t stack_depth;  /* frames kept per stack, <= CTP_MAX_STACK_DEPTH */
	/* 0x40 */ uint32_t stations_per_chunk;
	/* 0x44 */ uint32_t exit_kind;	   /* enum ctp_exit_kind; written once, release */
	/* 0x48 */ uint64_t next_coro_id;  /* the next coroutine id to hand out (starts at 1) */
	/* 0x50 */ uint64_t start_tsc;	   /* clock reading at segment creation ... */
	/* 0x58 */ uint64_t start_mono_ns; /* ... and CLOCK_MONOTONIC at the same moment */
	/* 0x60 */ uint64_t stations_lost; /* coroutines left untraced: no station could be had */
	/* 0x68 */ int32_t exit_value;	   /* exit status or signal number */
	/* 0x6C */ uint32_t crash_tid;	   /* thread that took the fatal signal */
	/* 0x70 */ uint64_t crash_coro;	   /* coroutine running on that thread then */
	/* 0x78 */ uint64_t crash_addr;	   /* si_addr of the fatal signal */
	/* The preload's makecontext trampoline, [lo, hi): a stack frame in it reads, to the
	 * program, as what its stack holds there untraced (glibc's __start_context). 0 until the
	 * first makecontext; then written once: lo and hi, then untraced with release. */
	/* 0x80 */ uint64_t entry_tramp_lo;
	/* 0x88 */ uint64_t entry_tramp_hi;
	/* 0x90 */ uint64_t entry_tramp_untraced;
	/* When the process recorded exit_kind: a clock reading (clock_kind), 0 = not recorded.
	 * Written before exit_kind's release. */
	/* 0x98 */ uint64_t exit_ts;
	/* 0xA0 */ uint64_t reserved[12];
};

/* Everything after the header lives in blocks, pushed onto a singly linked list whose head is
 * header.blocks_head. Blocks are never unlinked or moved. */
enum ctp_block_kind {
	CTP_BLOCK_STATIONS = 0x53544e53, /* "STNS" */
	CTP_BLOCK_RING = 0x474e4952,	 /* "RING" */
	CTP_BLOCK_MODULES = 0x53444f4d,	 /* "MODS" */
};

struct ctp_block {
	uint32_t kind; /* enum ctp_block_kind */
	uint32_t pad;
	uint64_t size; /* whole block in bytes, header included */
	uint64_t next; /* offset of the previously pushed block, 0 = end */
	uint64_t pad2;
};

/* ---- Stations ---------------------------------------------------------------------------- */

enum ctp_coro_state {
	CTP_STATE_FREE = 0,    /* unused slot */
	CTP_STATE_CREATED = 1, /* made, never run yet */
	CTP_STATE_RUNNING = 2,
	CTP_STATE_SUSPENDED = 3,
	CTP_STATE_EXITED = 4,
	/* Left by a setcontext: suspended, for a program may come back to it (getcontext and
	 * setcontext as a scheduler's switch); ended, unless something resumes it or it waits on
	 * an fd. The collector writes it so in the final state. */
	CTP_STATE_LEFT = 5,
};

enum ctp_coro_kind {
	CTP_KIND_THREAD = 1, /* a thread's own stack */
	CTP_KIND_UCONTEXT = 2,
	CTP_KIND_FCONTEXT = 3,
	CTP_KIND_SIMGRID_RAW = 4, /* SimGrid's raw contexts: raw_makecontext, raw_swapcontext */
};

/* What a suspended coroutine waits on (station.wait_op, ring fd records). */
enum ctp_wait_op {
	CTP_OP_NONE = 0,
	CTP_OP_READ = 1,
	CTP_OP_WRITE = 2,
	CTP_OP_ACCEPT = 3,
	CTP_OP_CONNECT = 4,
	CTP_OP_POLL = 5,
};

/* station.wait_op packs more than the operation (see CTP.md "Stations"): bits 0-6 the enum
 * ctp_wait_op, bit 7 set once the fd was closed while the coroutine waited on it, bits 8-31 the
 * low 24 bits of station.switches when the wait began. A wait lasts until the coroutine is
 * resumed: it is current only while `switches` still has those low bits. */
#define CTP_WAIT_OP_MASK 0x7fu
#define CTP_WAIT_CLOSED 0x80u
#define CTP_WAIT_EPOCH_SHIFT 8
#define CTP_WAIT_EPOCH_MASK 0xffffffu

static inline uint32_t ctp_wait_pack(uint32_t op, uint64_t switches)
{
	uint32_t epoch = (uint32_t)(switches & CTP_WAIT_EPOCH_MASK);
	return (op & CTP_WAIT_OP_MASK) | epoch << CTP_WAIT_EPOCH_SHIFT;
}

/* Whether a station's wait_fd/wait_op still describe what it waits on. */
static inline int ctp_wait_current(int32_t wait_fd, uint32_t wait_op, uint64_t switches)
{
	return wait_fd >= 0 && (wait_op & CTP_WAIT_OP_MASK) != CTP_OP_NONE &&
	       (wait_op >> CTP_WAIT_EPOCH_SHIFT) == (uint32_t)(switches & CTP_WAIT_EPOCH_MASK);
}

/* One coroutine's current state. Written only by the thread running that coroutine (or
 * creating it), under the seqlock `seq`; read by the collector with ctp_station_read. The
 * struct is followed by stack_depth frame addresses; station_size rounds the whole up to a
 * cache line so that two threads never write the same line. */
struct ctp_station {
	uint32_t seq;	      /* odd while being written */
	uint32_t state;	      /* enum ctp_coro_state */
	uint64_t coro;	      /* coroutine id, unique in the process, never reused */
	uint32_t kind;	      /* enum ctp_coro_kind */
	uint32_t tid;	      /* thread running it, or the last one that did */
	uint64_t entry;	      /* entry function address */
	uint64_t created;     /* clock at creation */
	uint64_t last_switch; /* clock at its last resume or suspend */
	uint64_t switches;    /* times it was resumed */
	uint64_t stack_lo;    /* its stack range [lo, hi) */
	uint64_t stack_hi;
	int32_t wait_fd;    /* -1 when it waits on nothing known */
	uint32_t wait_op;   /* enum ctp_wait_op, closed flag and epoch: CTP_WAIT_* */
	uint32_t stack_len; /* valid entries in frames[] */
	uint32_t free_next; /* preload-private free-list link; the collector ignores it */
	/* Where the suspended coroutine's registers are saved (enum ctp_ctx_kind says how to read
	 * them), so that its stack can be unwound later, off the switch path, while it stays
	 * suspended at the same `switches`. Valid only in state SUSPENDED. */
	uint64_t saved_ctx;
	uint32_t ctx_kind;   /* enum ctp_ctx_kind */
	uint32_t stack_kind; /* enum ctp_stack_kind: what frames[] holds */
	/* Preload-private (the collector ignores them): hashes of the suspend points (call site and
	 * stack depth) this coroutine's stack was last unwound at, on the switch itself. */
	uint32_t unwound_at[4];
	/* In state EXITED: 1 + the index of the station its thread resumed right after the end, 0
	 * when none (or not known). Written with the end, before that resume: a thread stopped for
	 * good between the two still names what it was going to run (CTP.md "Stations"). */
	uint32_t ended_to;
	uint32_t pad;
	uint64_t frames[]; /* latest suspend stack, innermost first */
};

/* How to read station.saved_ctx. */
enum ctp_ctx_kind {
	CTP_CTX_NONE = 0,
	/* The address of a ucontext_t (swapcontext's oucp): uc_mcontext.gregs holds every
	 * register, rip pointing into the swapcontext hook (unwind past it to the call site). */
	CTP_CTX_UCONTEXT = 1,
	/* A Boost.Context fcontext_t on x86-64 SysV: the stack pointer left by jump_fcontext or
	 * ontop_fcontext, pointing at 8 bytes of MXCSR/x87 control word, then r12, r13, r14, r15,
	 * rbx, rbp and the return address (the call site); the caller's rsp is fctx + 0x40. */
	CTP_CTX_FCONTEXT = 2,
	/* A SimGrid raw context on x86-64: the stack pointer raw_swapcontext left, pointing at
	 * r15, r14, r13, r12, rbx, rbp, r9, r8, rcx, rdx, rsi, rdi and the return address (the
	 * call site); the caller's rsp is ctx + 0x68. */
	CTP_CTX_SIMGRID_RAW = 3,
};

/* What station.frames[] (and the frames of a SWITCH record) hold. */
enum ctp_stack_kind {
	CTP_STACK_NONE = 0,
	CTP_STACK_CALL_SITE =
		1, /* frames[0] only: the return address into the code that switched */
	CTP_STACK_AT_SWITCH = 2, /* unwound on the switch itself */
	CTP_STACK_DEFERRED = 3,	 /* unwound later from saved_ctx, at the same suspend */
};

/* A block of stations. Station index i lives in the chunk with first <= i < first + count. */
struct ctp_station_chunk {
	struct ctp_block block;
	uint32_t first; /* index of the chunk's first station */
	uint32_t count;
	uint64_t stations_off; /* offset, from the segment base, of station `first` */
};

/* ---- Event rings ------------------------------------------------------------------------- */

/* One single-producer ring per thread: the producer is that thread, the consumer the collector.
 * head and tail are free-running byte counters (position = counter & (capacity - 1)); the
 * producer never writes into [tail, head) and drops a record it cannot fit, counting it in
 * `dropped`. Each counter has its own cache line. */
struct ctp_ring {
	struct ctp_block block;
	uint32_t owner; /* tid of the thread that produces into it, 0 = free to claim */
	uint32_t pad;
	uint64_t capacity; /* data bytes, a power of two */
	uint64_t data_off; /* offset of the data from the segment base */
	uint8_t pad1[CTP_CACHE_LINE - sizeof(struct ctp_block) - 24];
	/* producer's line */
	uint64_t head;	  /* bytes ever published; release */
	uint64_t dropped; /* records dropped for lack of room, ever; relaxed */
	uint8_t pad2[CTP_CACHE_LINE - 16];
	/* consumer's line */
	uint64_t tail; /* bytes ever consumed; release */
	uint8_t pad3[CTP_CACHE_LINE - 8];
};

/* Every record starts with this header and is a multiple of 8 bytes long. A record never wraps:
 * where one would not fit before the end of the data, the producer fills the rest with a PAD. */
struct ctp_rec {
	uint16_t size;	 /* whole record in bytes */
	uint8_t type;	 /* enum ctp_rec_type */
	uint8_t nframes; /* stack frames that follow the fixed part */
	uint32_t aux;	 /* per type: switch how, exit how, ... */
};

enum ctp_rec_type {
	CTP_REC_PAD = 0,
	CTP_REC_THREAD = 1, /* ctp_rec_thread: this ring now carries this thread's events */
	CTP_REC_CREATE = 2, /* ctp_rec_create + creation stack */
	CTP_REC_SWITCH = 3, /* ctp_rec_switch + suspend stack of `from` */
	CTP_REC_EXIT = 4,   /* ctp_rec_exit */
	CTP_REC_FD = 5,	    /* ctp_rec_fd + stack: an fd operation */
};

/* ctp_rec.aux of a switch: how the switch was made. */
enum ctp_switch_how {
	CTP_HOW_SWAPCONTEXT = 1,
	CTP_HOW_SETCONTEXT = 2,
	CTP_HOW_RETURN = 3, /* a makecontext coroutine returned; glibc went to uc_link */
	CTP_HOW_JUMP_FCONTEXT = 4,
	CTP_HOW_ONTOP_FCONTEXT = 5,
	CTP_HOW_SIGLONGJMP = 6,	     /* siglongjmp/longjmp into another coroutine's stack (QEMU) */
	CTP_HOW_RAW_SWAPCONTEXT = 7, /* SimGrid's raw_swapcontext */
};

struct ctp_rec_thread {
	struct ctp_rec h;
	uint32_t tid;
	uint32_t pad;
	uint64_t coro; /* the thread's own coroutine */
	uint64_t ts;
};

struct ctp_rec_create {
	struct ctp_rec h; /* aux: enum ctp_coro_kind */
	uint64_t ts;
	uint64_t coro;
	uint64_t parent; /* coroutine that created it */
	uint64_t entry;
	uint64_t stack_lo;
	uint64_t stack_hi;
	uint64_t frames[];
};

struct ctp_rec_switch {
	struct ctp_rec h; /* aux: enum ctp_switch_how */
	uint64_t ts;
	uint64_t from;
	uint64_t to;
	/* `from`'s station and the low 32 bits of its `switches` at this suspend: while the
	 * station still shows both, `from` is still suspended here and its stack can be unwound
	 * from the station's saved_ctx. from_station is UINT32_MAX when unknown. */
	uint32_t from_station;
	uint32_t from_switches;
	uint64_t frames[]; /* where `from` suspended: the call site, or the whole stack */
};

/* ctp_rec.aux of an exit that no switch made, besides 0 (a thread's own coroutine at its
 * thread's exit; any other one when its stack was given back or taken over). */
enum { CTP_EXIT_WITH_THREAD = 255 }; /* it was running when its thread exited under it */

struct ctp_rec_exit {
	struct ctp_rec h; /* aux: enum ctp_switch_how that ended it, 0 or CTP_EXIT_WITH_THREAD */
	uint64_t ts;
	uint64_t coro;
};

enum ctp_fd_event {
	CTP_FD_WOULD_BLOCK = 1, /* a call on fd returned EAGAIN/EWOULDBLOCK: the coroutine waits */
	CTP_FD_CLOSE = 2,
	CTP_FD_READY = 3,    /* epoll/poll/select reported fd ready */
	CTP_FD_REGISTER = 4, /* epoll_ctl ADD/MOD */
	CTP_FD_UNREGISTER = 5,
};

struct ctp_rec_fd {
	struct ctp_rec h; /* aux: enum ctp_fd_event */
	uint64_t ts;
	uint64_t coro;
	int32_t fd;
	uint32_t op;  /* enum ctp_wait_op */
	uint64_t arg; /* per event: waiter coroutine at close, epoll fd, ... */
	uint64_t frames[];
};

/* ---- Modules ----------------------------------------------------------------------------- */

#define CTP_MODULE_PATH_MAX 256u
#define CTP_BUILD_ID_MAX 32u

struct ctp_module {
	uint64_t base;	 /* load bias (dlpi_addr) */
	uint64_t lo, hi; /* mapped address range of its PT_LOAD segments */
	uint32_t build_id_len;
	uint8_t build_id[CTP_BUILD_ID_MAX];
	char path[CTP_MODULE_PATH_MAX]; /* NUL-terminated */
	uint32_t pad;
};

struct ctp_module_chunk {
	struct ctp_block block;
	uint32_t capacity;
	uint32_t count; /* entries published; release */
	uint64_t pad;
	struct ctp_module modules[];
};

/* ---- Layout checks ----------------------------------------------------------------------- */

_Static_assert(offsetof(struct ctp_header, magic) == 0x00, "cTP magic at 0x00");
_Static_assert(offsetof(struct ctp_header, version) == 0x08, "cTP version at 0x08");
_Static_assert(offsetof(struct ctp_header, sleep_flag) == 0x14, "cTP sleep flag at 0x14");
_Static_assert(offsetof(struct ctp_header, entry_tramp_lo) == 0x80, "header layout");
_Static_assert(offsetof(struct ctp_header, exit_ts) == 0x98, "header layout");
_Static_assert(offsetof(struct ctp_header, reserved) == 0xA0, "header layout");
_Static_assert(sizeof(struct ctp_header) == 0x100, "header is 256 bytes");
_Static_assert(sizeof(struct ctp_block) == 32, "block header");
_Static_assert(sizeof(struct ctp_station) == 128, "station fixed part");
_Static_assert(offsetof(struct ctp_station, saved_ctx) == 88, "station saved context");
_Static_assert(offsetof(struct ctp_station, ended_to) == 120, "station end");
_Static_assert(offsetof(struct ctp_station, frames) == 128, "station frames");
_Static_assert(offsetof(struct ctp_ring, head) == CTP_CACHE_LINE, "ring head on its own line");
_Static_assert(offsetof(struct ctp_ring, tail) == 2 * CTP_CACHE_LINE, "ring tail line");
_Static_assert(sizeof(struct ctp_ring) == 3 * CTP_CACHE_LINE, "ring header");
_Static_assert(sizeof(struct ctp_rec) == 8, "record header");
_Static_assert(sizeof(struct ctp_rec_switch) == 40, "switch record");
_Static_assert(sizeof(struct ctp_rec_create) == 56, "create record");
_Static_assert(sizeof(struct ctp_rec_fd) == 40, "fd record");
_Static_assert(sizeof(struct ctp_module) % 8 == 0, "module entry");
_Static_assert(sizeof(struct ctp_station_chunk) == 48, "station chunk header");

/* Bytes of one station for a given stack depth: the fixed part and the frames, rounded up to a
 * cache line. */
static inline uint32_t ctp_station_size(uint32_t depth)
{
	uint32_t raw = (uint32_t)sizeof(struct ctp_station) + 8u * depth;
	return (raw + CTP_CACHE_LINE - 1) & ~(CTP_CACHE_LINE - 1);
}

#endif

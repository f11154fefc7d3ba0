/* Per-thread state. Each thread's own stack is a coroutine of kind `thread`; its state lives
 * in initial-exec TLS (the preload is loaded at start, so it has static TLS), reached only
 * through ctp_thread_get, which the compiler may not merge across a context switch. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "ctp/station.h"
#include "preload/compiler.h"
#include "preload/signal_stack.h"
#include "preload/events.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/rings.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/own_fds.h"
#include "preload/threads.h"
#include "preload/walk_stack.h"

__thread struct ctp_thread ctp_tls_thread __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg);

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* /proc/self/maps, opened once per process (ctp_threads_open_maps) and kept as one of the
 * preload's own fds: each new thread reads it for its stack's bounds. Opened at each thread's
 * start, its fd took the lowest free number while it was open, and a thread of the program that
 * opened a file meanwhile got another number than untraced (POSIX promises the lowest). */
static int maps_fd = -1;

void ctp_threads_close_maps(void)
{
	if (maps_fd >= 0)
		ctp_own_fd_close(&maps_fd);
}

void ctp_threads_open_maps(void)
{
	ctp_threads_close_maps(); /* a fork child's names its parent's maps */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	maps_fd = ctp_own_fd_move_high(fd);
	ctp_own_fd_register(&maps_fd);
}

/* The mapping of /proc/self/maps that holds addr, read with raw syscalls and no allocation, on
 * the new thread's own stack: in pieces of a small buffer, as that stack may be the least glibc
 * allows (16 KiB, less the TLS). A line longer than the buffer (a long path) is skipped: a
 * thread's stack is an anonymous mapping, whose line is short. pread, at offsets of this
 * thread's own, so that threads starting together each read the file whole. */
static bool mapping_of(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	int fd = __atomic_load_n(&maps_fd, __ATOMIC_RELAXED);
	if (fd < 0 || !ctp_own_fd_valid(&maps_fd))
		return false;
	char buf[512];
	size_t have = 0;
	uint64_t at = 0;
	bool found = false, skipping = false;
	for (;;) {
		long n = syscall(SYS_pread64, fd, buf + have, sizeof(buf) - 1 - have, (off_t)at);
		if (n <= 0)
			break;
		at += (uint64_t)n;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n')) != NULL) {
			if (!skipping) {
				char *end;
				uint64_t a = strtoull(line, &end, 16);
				uint64_t b = *end == '-' ? strtoull(end + 1, NULL, 16) : 0;
				if (a <= addr && addr < b) {
					*lo = a;
					*hi = b;
					found = true;
					break;
				}
			}
			skipping = false;
			line = nl + 1;
		}
		if (found)
			break;
		/* Keep the unfinished line for the next read; drop one that fills the buffer, and
		 * skip its rest up to its newline. */
		have = strlen(line);
		if (have == sizeof(buf) - 1) {
			have = 0;
			skipping = true;
		} else {
			memmove(buf, line, have);
		}
	}
	return found;
}

/* The thread's own stack. For the main thread glibc knows it (its size follows RLIMIT_STACK).
 * For another thread pthread_getattr_np would do, but it allocates, and an allocation made on a
 * new thread gives the thread a malloc arena of its own: 64 MiB of address space each, which
 * the program without the tracer would not have had. Its stack is one mapping (the guard page
 * below is another). */
static void own_stack_range(struct ctp_thread *t)
{
	if (t->tid != (uint32_t)syscall(SYS_getpid)) {
		uint64_t lo, hi;
		if (mapping_of((uint64_t)__builtin_frame_address(0), &lo, &hi)) {
			t->stack_lo = lo;
			t->stack_hi = hi;
		}
		return;
	}
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uint64_t)addr;
		t->stack_hi = (uint64_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

static bool start_tracing(struct ctp_thread *t)
{
	t->state = CTP_THREAD_BUSY; /* hooks reached from here pass through */
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->current = t->self = CTP_NO_STATION;
	own_stack_range(t);
	t->self = ctp_station_alloc();
	uint64_t coro = ctp_coro_new_id();
	if (t->self == CTP_NO_STATION || !ctp_ring_attach(t, coro)) {
		if (t->self != CTP_NO_STATION)
			ctp_station_free(t->self);
		t->state = CTP_THREAD_OFF;
		return false;
	}
	t->self_station = t->current_station = ctp_station_at(t->self);
	t->current = t->self;
	/* Until the walk area holds the thread's own (walk_stack.c). */
	t->lookup = (struct ctp_lookup_hint(*)[2])ctp_no_lookup_hints;
	ctp_coro_begin(t, t->self, coro, CTP_KIND_THREAD, t->entry_hint, t->stack_lo, t->stack_hi,
		       CTP_STATE_RUNNING, 0, 0);
	t->slot = ctp_thread_stacks_add(t->self);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, t); /* any non-NULL value makes the destructor run */
	ctp_signal_stack_for_thread(t);
	t->state = CTP_THREAD_TRACING;
	return true;
}

/* Runs at thread exit (pthread key destructor): the thread's own coroutine ends, its station
 * and ring go back to the pools, its signal and walk stacks are given back. Hooks reached after
 * this pass through. */
static void thread_exit(void *arg)
{
	(void)arg;
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING)
		return;
	int saved_errno = errno;
	t->state = CTP_THREAD_BUSY;
	ctp_thread_stacks_remove(t->self);
	/* Coroutines on buffers inside its own stack end with it, whichever thread made them:
	 * glibc keeps the stack and hands it to the next thread it starts, whose own frames would
	 * otherwise be taken for those coroutines (a switch back to that thread recorded as a
	 * resume of one of them). Asked only where such a coroutine was made: an 8 MiB stack is up
	 * to 2048 pages of the stack map's page table, ~35,000 instructions to go through. */
	if (ctp_thread_stack_may_hold_coroutines(t))
		ctp_stackmap_retire_overlapping(t, t->stack_lo, t->stack_hi);
	ctp_thread_end(t);
	ctp_ring_detach(t);
	ctp_signal_stack_release(t);
	ctp_walk_area_release(t);
	t->state = CTP_THREAD_OFF;
	errno = saved_errno;
}

__attribute__((noinline, noipa)) struct ctp_thread *ctp_thread_get_slow(void)
{
	struct ctp_thread *t = &ctp_tls_thread;
	/* The empty asm keeps the compiler from assuming anything about the TLS address. */
	__asm__ volatile("" : "+r"(t));
	if (__builtin_expect(t->state == CTP_THREAD_TRACING, 1))
		return t;
	if (t->state != CTP_THREAD_NEW || !ctp_process_ready())
		return NULL;
	int saved_errno = errno; /* a hook that starts a thread keeps the program's errno */
	bool started = start_tracing(t);
	errno = saved_errno;
	return started ? t : NULL;
}

struct fork_child_view {
	struct ctp_thread *t; /* the forking thread, the child's only one */
	uint32_t parent_tid;  /* its tid in the parent, which its stations still carry */
};

/* Each coroutine of a thread that did not go on in the child: the thread's own, and the one
 * running on it. Coroutines suspended stay: the child's thread may resume them. */
static void end_foreign_thread(uint32_t idx, struct ctp_station *s, void *arg)
{
	const struct fork_child_view *v = arg;
	uint32_t state = CTP_LOAD_RELAXED(&s->state);
	if (idx == v->t->self || idx == v->t->current || state == CTP_STATE_EXITED ||
	    state == CTP_STATE_FREE)
		return;
	bool own = CTP_LOAD_RELAXED(&s->kind) == CTP_KIND_THREAD;
	if (!own && (state != CTP_STATE_RUNNING || CTP_LOAD_RELAXED(&s->tid) == v->parent_tid))
		return;
	if (own)
		ctp_thread_stacks_remove(idx);
	ctp_coro_end_in_fork_child(v->t, idx);
}

/* The child's thread runs on: its own station and the one it runs, if another, carry its tid. */
static void take_child_tid(struct ctp_station *s, uint32_t tid)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->tid, tid);
	ctp_station_write_end(s, seq);
}

void ctp_threads_fork_child(void)
{
	ctp_threads_open_maps();
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING)
		return;
	struct fork_child_view v = {.t = t, .parent_tid = t->tid};
	t->tid = (uint32_t)syscall(SYS_gettid);
	take_child_tid(ctp_station_at(t->self), t->tid);
	if (t->current != t->self && t->current != CTP_NO_STATION)
		take_child_tid(t->current_station, t->tid);
	/* The ring first: the ends below are recorded in the child's. */
	ctp_rings_fork_child(t);
	ctp_stations_each(end_foreign_thread, &v);
}

/* pthread_create: the new thread's own coroutine appears when it starts, not at its first
 * switch, and names its start routine. The start routine and its argument wait for the new
 * thread in a slot of a fixed pool, not on the heap: a free() on the new thread would give it a
 * malloc arena of its own (64 MiB of address space) that the program would not have had. With
 * every slot taken (that many threads created and not started yet), a thread starts as the
 * program asked and is traced from its first hooked call. */
enum { START_SLOTS = 256 };
struct start_slot {
	void *(*fn)(void *);
	void *arg;
	int taken;
};
static struct start_slot start_slots[START_SLOTS];

static struct start_slot *take_start_slot(void)
{
	for (int i = 0; i < START_SLOTS; i++) {
		int expected = 0;
		if (__atomic_compare_exchange_n(&start_slots[i].taken, &expected, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return &start_slots[i];
	}
	return NULL;
}

static void *thread_trampoline(void *p)
{
	struct start_slot *slot = p;
	void *(*fn)(void *) = slot->fn;
	void *arg = slot->arg;
	__atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
	ctp_tls_thread.entry_hint = (uint64_t)fn;
	ctp_thread_get();
	return fn(arg);
}

CTP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			      void *arg)
{
	CTP_REAL(pthread_create);
	struct start_slot *slot;
	if (!ctp_process_ready() || !(slot = take_start_slot()))
		return real_pthread_create(thread, attr, start, arg);
	slot->fn = start;
	slot->arg = arg;
	int rc = real_pthread_create(thread, attr, thread_trampoline, slot);
	if (rc != 0)
		__atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
	return rc;
}

/* Who waits on which fd, and what happened to that fd: the rare paths of the I/O hooks.
 *
 * A coroutine that gets EAGAIN (a call that would have blocked) is about to suspend until the fd
 * is ready: its station's wait_fd/wait_op say so, with the station's switch count as an epoch,
 * so that the wait ends by itself when the coroutine is next resumed (see CTP.md "Stations").
 * The fd table remembers that coroutine for the fd; a close, a dup2 over the fd or a readiness
 * report then looks it up there and checks the waiter's station, which is the truth.
 *
 * Everything here runs with the thread marked busy, so that a hook reached from a signal handler
 * meanwhile passes through instead of writing into the same ring or station. errno is kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "ctp/station.h"
#include "preload/events.h"
#include "preload/fd_table.h"
#include "preload/io_epoll_keys.h"
#include "preload/io_record.h"
#include "preload/process.h"
#include "preload/rings.h"
#include "preload/segment.h"
#include "preload/stackmap.h"
#include "preload/stations.h"
#include "preload/threads.h"
#include "preload/unwind.h"

/* Frames of ours above the program's call: the function here and the hook. */
enum { OWN_FRAMES = 2 };

static void busy(struct ctp_thread *t)
{
	t->state = CTP_THREAD_BUSY;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void idle(struct ctp_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->state = CTP_THREAD_TRACING;
}

static uint64_t current_coro(struct ctp_thread *t)
{
	return CTP_LOAD_RELAXED(&ctp_station_at(t->current)->coro);
}

static void emit_fd(struct ctp_thread *t, uint32_t event, int fd, uint32_t op, uint64_t arg,
		    const uint64_t *frames, uint32_t n)
{
	uint32_t size = sizeof(struct ctp_rec_fd) + 8 * n;
	struct ctp_rec_fd *rec = ctp_emit_reserve(t, size);
	if (!rec)
		return;
	rec->h = (struct ctp_rec){
		.size = (uint16_t)size, .type = CTP_REC_FD, .nframes = (uint8_t)n, .aux = event};
	rec->ts = ctp_now();
	rec->coro = current_coro(t);
	rec->fd = fd;
	rec->op = op;
	rec->arg = arg;
	if (n)
		memcpy(rec->frames, frames, 8 * n);
	ctp_emit_commit(t);
}

/* The current coroutine's own station: this thread is its only writer now. */
static void set_wait(struct ctp_station *s, int fd, uint32_t wait_op)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->wait_fd, fd);
	CTP_STORE_RELAXED(&s->wait_op, wait_op);
	ctp_station_write_end(s, seq);
}

/* Forgets that station `idx` waits on fd, if the table still says so. */
static void slot_forget(int fd, uint32_t idx)
{
	struct ctp_fd_slot *slot = ctp_fd_slot(fd);
	uint32_t mine = idx + 1;
	if (slot)
		__atomic_compare_exchange_n(&slot->station, &mine, 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

static void watch_add(struct ctp_fd_slot *slot, uint8_t bit)
{
	if (!(__atomic_load_n(&slot->watch, __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(&slot->watch, bit, __ATOMIC_RELAXED);
}

/* The coroutine in station idx, running here, now waits on fd. */
static void begin_wait(uint32_t idx, struct ctp_station *s, int fd, uint32_t op)
{
	int previous = CTP_LOAD_RELAXED(&s->wait_fd);
	if (previous >= 0 && previous != fd)
		slot_forget(previous, idx);
	set_wait(s, fd, ctp_wait_pack(op, CTP_LOAD_RELAXED(&s->switches)));
	struct ctp_fd_slot *slot = ctp_fd_slot_make(fd);
	if (slot) {
		__atomic_store_n(&slot->waiter, CTP_LOAD_RELAXED(&s->coro), __ATOMIC_RELAXED);
		__atomic_store_n(&slot->op, (uint8_t)op, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->station, idx + 1, __ATOMIC_RELAXED);
		watch_add(slot, CTP_FD_WATCH_SEEN);
	}
}

/* Whether the coroutine in station idx polls fd each time it runs rather than waits for it. A
 * coroutine that waits for an fd probes it (a zero-timeout poll, GNU Pth's pth_read) and then
 * suspends until the fd is ready. A scheduler probes its own wake-up pipe in every run of its
 * loop (Pth's, at each dispatch), and reads it when it has something: were it a waiter, every
 * program would end with its scheduler "waiting" on a pipe that pth_kill closes, a lost wakeup
 * that is none. So: a coroutine that probes the same fd again in a later run, the fd neither
 * closed in between nor ready for it (a waiter resumed for its fd reads it and succeeds, which
 * ends its wait), polls that fd; none of its would-blocks on it is a wait from then on. */
static bool polls_each_run(struct ctp_fd_slot *slot, uint32_t idx, const struct ctp_station *s,
			   uint32_t op)
{
	uint32_t me = idx + 1;
	uint32_t run = (uint32_t)CTP_LOAD_RELAXED(&s->switches);
	uint32_t probe = __atomic_load_n(&slot->probe, __ATOMIC_RELAXED);
	if (probe == me && (__atomic_load_n(&slot->watch, __ATOMIC_RELAXED) & CTP_FD_WATCH_POLLER))
		return true;
	if (op != CTP_OP_POLL)
		return false;
	if (probe == me && __atomic_load_n(&slot->probe_run, __ATOMIC_RELAXED) != run) {
		__atomic_fetch_or(&slot->watch, CTP_FD_WATCH_POLLER, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_store_n(&slot->probe, me, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->probe_run, run, __ATOMIC_RELAXED);
	return false;
}

/* The stack of a would-block: its call site, and the whole stack the first time the coroutine
 * waits at that place (or every time with stacks=every-switch), as for a switch (events.c). */
static uint32_t would_block_stack(struct ctp_station *s, const uint64_t *call_site, uint64_t depth,
				  const uint64_t **frames)
{
	uint32_t max = ctp_proc.config.stack_depth, n = 0;
	if (max == 0 || *call_site == 0)
		return 0;
	if (ctp_proc.config.stacks_every_switch || ctp_first_time_here(s, *call_site, depth))
		n = ctp_unwind_from(frames, max, *call_site, depth + 8);
	if (n == 0) {
		*frames = call_site;
		n = 1;
	}
	return n;
}

__attribute__((noinline)) void ctp_io_would_block(int fd, uint32_t op, uint64_t call_site,
						  uint64_t depth)
{
	int saved = errno;
	struct ctp_thread *t = ctp_thread_get();
	if (!t)
		goto out;
	uint32_t idx = t->current;
	struct ctp_station *s = ctp_station_at(idx);
	/* A thread polling one fd with a zero timeout is an event loop spinning, not a
	 * coroutine about to suspend. */
	if (op == CTP_OP_POLL && CTP_LOAD_RELAXED(&s->kind) == CTP_KIND_THREAD)
		goto out;
	struct ctp_fd_slot *slot = ctp_fd_slot_make(fd);
	if (slot && polls_each_run(slot, idx, s, op)) {
		if (CTP_LOAD_RELAXED(&s->wait_fd) == fd) {
			busy(t);
			set_wait(s, -1, CTP_OP_NONE);
			slot_forget(fd, idx);
			idle(t);
		}
		goto out;
	}
	busy(t);
	begin_wait(idx, s, fd, op);
	const uint64_t *frames = NULL;
	uint32_t n = would_block_stack(s, &call_site, depth, &frames);
	emit_fd(t, CTP_FD_WOULD_BLOCK, fd, op, 0, frames, n);
	idle(t);
out:
	errno = saved;
}

void ctp_io_succeeded(int fd, struct ctp_fd_slot *slot)
{
	int saved = errno;
	struct ctp_thread *t = ctp_thread_get();
	if (!t || __atomic_load_n(&slot->station, __ATOMIC_RELAXED) != t->current + 1)
		goto out; /* another coroutine waits on it */
	busy(t);
	struct ctp_station *s = ctp_station_at(t->current);
	if (CTP_LOAD_RELAXED(&s->wait_fd) == fd)
		set_wait(s, -1, CTP_OP_NONE);
	slot_forget(fd, t->current);
	idle(t);
out:
	errno = saved;
}

/* The coroutine that waits on fd now, per the table's hint and its station; 0 when none. On
 * success *station_out and *wait_op_out say where and how. */
static uint64_t current_waiter(int fd, uint32_t station_plus1, uint64_t hint,
			       struct ctp_station **station_out, uint32_t *wait_op_out)
{
	if (station_plus1 == 0 || station_plus1 > CTP_LOAD_RELAXED(&ctp_seg.hdr->station_count))
		return 0;
	struct ctp_station *s = ctp_station_at(station_plus1 - 1);
	struct ctp_station_snapshot snap;
	if (!ctp_station_read(s, 0, &snap) || snap.coro != hint || snap.state == CTP_STATE_EXITED ||
	    snap.wait_fd != fd || !ctp_wait_current(snap.wait_fd, snap.wait_op, snap.switches))
		return 0;
	*station_out = s;
	*wait_op_out = snap.wait_op;
	return snap.coro;
}

/* Whether a close is this process's own. A vfork child runs in our memory until it calls exec,
 * and so does a child made with clone(CLONE_VM): their closes are not ours (the fd stays open
 * here), and nothing may be started on their behalf (ctp_thread_get would start tracing a new
 * thread). vfork's child is known by its hook's flag. A clone child runs on a stack of its own,
 * so a caller on the running coroutine's stack or on its tracing thread's is ours; elsewhere (a
 * stack the tracer never saw made) getpid tells. It is not asked every time: a syscall costs
 * 1 us where the kernel isolates its page tables without PCID, and a server closes a socket per
 * query. */
static bool close_is_ours(void)
{
	if (ctp_in_vfork_child())
		return false;
	const struct ctp_thread *t = &ctp_tls_thread;
	uint64_t sp = (uint64_t)__builtin_frame_address(0);
	if (t->state == CTP_THREAD_TRACING &&
	    ((t->stack_lo <= sp && sp < t->stack_hi) ||
	     ctp_station_live_over_at(t->current_station, sp, sp + 1)))
		return true;
	return (uint32_t)syscall(SYS_getpid) == ctp_proc.pid;
}

__attribute__((noinline)) void ctp_io_close_end(int fd, const struct ctp_fd_closing *c,
						uint64_t call_site, uint64_t frame)
{
	int saved = errno;
	if (!close_is_ours())
		goto out;
	struct ctp_fd_slot *slot = ctp_fd_slot(fd);
	if (slot) {
		/* The number is free again; a new waiter may already have taken it. */
		uint32_t expected = c->station;
		__atomic_compare_exchange_n(&slot->station, &expected, 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		__atomic_store_n(&slot->watch, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->probe, 0, __ATOMIC_RELAXED);
	}
	struct ctp_thread *t = ctp_thread_get();
	if (!t)
		goto out;
	busy(t);
	struct ctp_station *ws = NULL;
	uint32_t wait_op = 0;
	uint64_t waiter = current_waiter(fd, c->station, c->waiter, &ws, &wait_op);
	if (waiter && ws == ctp_station_at(t->current)) {
		/* The waiter closes the fd itself: it no longer waits on it. */
		set_wait(ws, -1, CTP_OP_NONE);
		waiter = 0;
	} else if (waiter) {
		/* Another coroutine's station, written outside its seqlock: one compare-and-swap
		 * of wait_op alone, which fails if the waiter has moved on meanwhile. Readers see
		 * the flag either set or not, never a torn wait. */
		__atomic_compare_exchange_n(&ws->wait_op, &wait_op, wait_op | CTP_WAIT_CLOSED,
					    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	const uint64_t *frames = NULL;
	uint32_t depth = ctp_proc.config.stack_depth;
	uint32_t n = call_site ? ctp_unwind_from(&frames, depth, call_site, frame + 8)
			       : ctp_unwind(&frames, depth, OWN_FRAMES);
	emit_fd(t, CTP_FD_CLOSE, fd, waiter ? (wait_op & CTP_WAIT_OP_MASK) : CTP_OP_NONE, waiter,
		frames, n);
	idle(t);
out:
	errno = saved;
}

void ctp_io_ready(int fd, struct ctp_fd_slot *slot)
{
	int saved = errno;
	struct ctp_station *ws;
	uint32_t wait_op;
	uint64_t waiter =
		current_waiter(fd, __atomic_load_n(&slot->station, __ATOMIC_RELAXED),
			       __atomic_load_n(&slot->waiter, __ATOMIC_RELAXED), &ws, &wait_op);
	struct ctp_thread *t;
	if (waiter && (t = ctp_thread_get())) {
		busy(t);
		emit_fd(t, CTP_FD_READY, fd, wait_op & CTP_WAIT_OP_MASK, waiter, NULL, 0);
		idle(t);
	}
	errno = saved;
}

static uint32_t interest(uint32_t events)
{
	bool in = events & (EPOLLIN | EPOLLPRI | EPOLLRDHUP), out = events & EPOLLOUT;
	return in && out ? CTP_OP_POLL : in ? CTP_OP_READ : out ? CTP_OP_WRITE : CTP_OP_NONE;
}

void ctp_io_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
	int saved = errno;
	struct ctp_thread *t = ctp_thread_get();
	struct ctp_fd_slot *slot;
	if (!t || !(slot = ctp_fd_slot_make(fd)))
		goto out;
	busy(t);
	if (op == EPOLL_CTL_DEL) {
		emit_fd(t, CTP_FD_UNREGISTER, fd, CTP_OP_NONE, (uint64_t)epfd, NULL, 0);
	} else {
		ctp_epoll_key_set(data, fd);
		watch_add(slot, CTP_FD_WATCH_EPOLL);
		/* A coroutine that adds an fd level-triggered registers it for this one wait
		 * (pdns-recursor's MTasker adds and removes it around each) and suspends next:
		 * it waits on it. Asio's edge-triggered add, once per socket, says nothing. */
		struct ctp_station *s = ctp_station_at(t->current);
		if (op == EPOLL_CTL_ADD && !(events & EPOLLET) && interest(events) != CTP_OP_NONE &&
		    CTP_LOAD_RELAXED(&s->kind) != CTP_KIND_THREAD)
			begin_wait(t->current, s, fd, interest(events));
		emit_fd(t, CTP_FD_REGISTER, fd, interest(events), (uint64_t)epfd, NULL, 0);
	}
	idle(t);
out:
	errno = saved;
}

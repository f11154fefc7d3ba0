/* What the I/O hooks record (io_record.c), and the inline checks that decide whether there is
 * anything to record. */
#ifndef CTP_PRELOAD_IO_RECORD_H
#define CTP_PRELOAD_IO_RECORD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "preload/compiler.h"
#include "preload/fd_table.h"

/* The rare paths of the I/O hooks (io_record.c). Each keeps errno and records nothing on a
 * thread that is not tracing. Called straight from a hook, so that the stack they record
 * starts at the hook's caller. */

/* A would-block: the calling coroutine now waits on fd. `call_site` and `depth` come from
 * CTP_IO_CALLER in the hook: where the program called it, and how deep its stack was there. */
CTP_HIDDEN void ctp_io_would_block(int fd, uint32_t op, uint64_t call_site, uint64_t depth);
/* Only in a hook, or in a function always inlined into one: what ctp_io_would_block wants to
 * know of the hook's caller, for free. */
#define CTP_IO_CALLER() (uint64_t) __builtin_return_address(0), (uint64_t)__builtin_frame_address(0)
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
/* ...and after it was closed: the CLOSE record, the waiter's station marked closed. call_site,
 * frame: the closing hook's CTP_IO_CALLER(), whose place lets a stack walked there before be
 * checked in memory (unwind_memo.h); 0, 0 where there is no one call (close_range's loop). */
CTP_HIDDEN void ctp_io_close_end(int fd, const struct ctp_fd_closing *c, uint64_t call_site,
				 uint64_t frame);
/* An fd that epoll, poll or select reported ready: a READY record if a coroutine waits on it. */
CTP_HIDDEN void ctp_io_ready(int fd, struct ctp_fd_slot *s);
/* epoll_ctl succeeded: REGISTER or UNREGISTER. */
CTP_HIDDEN void ctp_io_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);

/* After a read- or write-like call on fd returned rc, errno as it left it: nothing but two
 * loads unless the call would have blocked or fd has a waiter. */
static inline __attribute__((always_inline)) void ctp_io_after(int fd, long rc, uint32_t op)
{
	if (CTP_UNLIKELY(rc < 0)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			ctp_io_would_block(fd, op, CTP_IO_CALLER());
		return;
	}
	struct ctp_fd_slot *s = ctp_fd_slot(fd);
	if (CTP_UNLIKELY(s && __atomic_load_n(&s->station, __ATOMIC_RELAXED)))
		ctp_io_succeeded(fd, s);
}

#endif

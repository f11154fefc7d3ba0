/* Fd attribution (fd_table.c): per fd number, the coroutine waiting on it and which readiness
 * APIs name it. */
#ifndef CTP_PRELOAD_FD_TABLE_H
#define CTP_PRELOAD_FD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "preload/compiler.h"

/* What the preload knows of one fd number: the coroutine that last got EAGAIN on it (a hint;
 * its station says whether it still waits) and which readiness APIs name it. */
enum {
	/* registered with epoll_ctl ADD/MOD since it was opened; kept after DEL, since Asio
	 * takes a socket out of its set just before it closes it */
	CTP_FD_WATCH_EPOLL = 1,
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

#endif

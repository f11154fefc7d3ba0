/* Readiness: epoll, poll and select. What they report ready is recorded only for fds a
 * coroutine waits on (READY records, so that a readiness nobody acted on can be found);
 * epoll_ctl registrations are recorded as they are made. A zero-timeout poll or select of one fd
 * that finds it not ready is how some schedulers (GNU Pth) test before suspending a coroutine:
 * that counts as a wait on the fd. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "ctp/segment.h"
#include "preload/compiler.h"
#include "preload/fd_table.h"
#include "preload/io_epoll_keys.h"
#include "preload/io_record.h"
#include "preload/process.h"
#include "preload/real.h"

int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *ss,
		size_t fdslen);

static inline bool tracing(void)
{
	return __atomic_load_n(&ctp_proc.state, __ATOMIC_RELAXED) == CTP_PROC_TRACING;
}

/* Marks fd as named by a poll or select; returns its slot. */
static inline struct ctp_fd_slot *polled(int fd)
{
	struct ctp_fd_slot *s = ctp_fd_slot(fd);
	if (__builtin_expect(
		    s && (__atomic_load_n(&s->watch, __ATOMIC_RELAXED) & CTP_FD_WATCH_POLL), 1))
		return s;
	if (!(s = ctp_fd_slot_make(fd)))
		return NULL;
	__atomic_fetch_or(&s->watch, CTP_FD_WATCH_POLL, __ATOMIC_RELAXED);
	return s;
}

/* Inlined into each hook, so that a recorded stack starts at the hook's caller. */
static inline __attribute__((always_inline)) void after_poll(struct pollfd *fds, nfds_t nfds,
							     int rc, bool zero_timeout)
{
	if (rc < 0 || !tracing())
		return;
	if (rc == 0 && zero_timeout && nfds == 1 && fds[0].fd >= 0) {
		polled(fds[0].fd);
		ctp_io_would_block(fds[0].fd, CTP_OP_POLL, CTP_IO_CALLER());
		return;
	}
	for (nfds_t i = 0; i < nfds; i++) {
		if (fds[i].fd < 0)
			continue;
		struct ctp_fd_slot *s = polled(fds[i].fd);
		if (s && fds[i].revents && __atomic_load_n(&s->station, __ATOMIC_RELAXED))
			ctp_io_ready(fds[i].fd, s);
	}
}

CTP_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	CTP_REAL(poll);
	int rc = real_poll(fds, nfds, timeout);
	after_poll(fds, nfds, rc, timeout == 0);
	return rc;
}

CTP_EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
	CTP_REAL(__poll_chk);
	int rc = real___poll_chk(fds, nfds, timeout, fdslen);
	after_poll(fds, nfds, rc, timeout == 0);
	return rc;
}

static inline bool zero_ts(const struct timespec *ts)
{
	return ts && ts->tv_sec == 0 && ts->tv_nsec == 0;
}

CTP_EXPORT int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		     const sigset_t *ss)
{
	CTP_REAL(ppoll);
	int rc = real_ppoll(fds, nfds, timeout, ss);
	after_poll(fds, nfds, rc, zero_ts(timeout));
	return rc;
}

CTP_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
			   const sigset_t *ss, size_t fdslen)
{
	CTP_REAL(__ppoll_chk);
	int rc = real___ppoll_chk(fds, nfds, timeout, ss, fdslen);
	after_poll(fds, nfds, rc, zero_ts(timeout));
	return rc;
}

/* select overwrites its sets: the fds asked about are saved first. */
struct select_ask {
	int nfds;
	fd_set asked; /* read | write | except, as given */
};

static inline void select_before(struct select_ask *a, int nfds, const fd_set *r, const fd_set *w,
				 const fd_set *e)
{
	a->nfds = nfds > FD_SETSIZE ? FD_SETSIZE : nfds < 0 ? 0 : nfds;
	size_t words = ((size_t)a->nfds + 8 * sizeof(long) - 1) / (8 * sizeof(long));
	const long *sets[3] = {r ? r->fds_bits : NULL, w ? w->fds_bits : NULL,
			       e ? e->fds_bits : NULL};
	for (size_t i = 0; i < words; i++)
		a->asked.fds_bits[i] = (sets[0] ? sets[0][i] : 0) | (sets[1] ? sets[1][i] : 0) |
				       (sets[2] ? sets[2][i] : 0);
}

static inline __attribute__((always_inline)) void after_select(const struct select_ask *a, int rc,
							       bool zero_timeout, const fd_set *r,
							       const fd_set *w, const fd_set *e)
{
	if (rc < 0 || !tracing())
		return;
	int only = -1, count = 0;
	for (int fd = 0; fd < a->nfds; fd++) {
		if (!FD_ISSET(fd, &a->asked))
			continue;
		count++;
		only = fd;
		struct ctp_fd_slot *s = polled(fd);
		bool ready = rc > 0 && ((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) ||
					(e && FD_ISSET(fd, e)));
		if (s && ready && __atomic_load_n(&s->station, __ATOMIC_RELAXED))
			ctp_io_ready(fd, s);
	}
	if (rc == 0 && zero_timeout && count == 1)
		ctp_io_would_block(only, CTP_OP_POLL, CTP_IO_CALLER());
}

CTP_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
	CTP_REAL(select);
	struct select_ask a;
	select_before(&a, nfds, r, w, e);
	bool zero = timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0;
	int rc = real_select(nfds, r, w, e, timeout);
	after_select(&a, rc, zero, r, w, e);
	return rc;
}

CTP_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
		       const sigset_t *ss)
{
	CTP_REAL(pselect);
	struct select_ask a;
	select_before(&a, nfds, r, w, e);
	int rc = real_pselect(nfds, r, w, e, timeout, ss);
	after_select(&a, rc, zero_ts(timeout), r, w, e);
	return rc;
}

CTP_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
	CTP_REAL(epoll_ctl);
	int rc = real_epoll_ctl(epfd, op, fd, event);
	if (rc == 0 && (op == EPOLL_CTL_DEL || event) && tracing())
		ctp_io_epoll_ctl(epfd, op, fd, event && op != EPOLL_CTL_DEL ? event->events : 0,
				 event && op != EPOLL_CTL_DEL ? event->data.u64 : 0);
	return rc;
}

/* The reported events name registrations by their data: ctp_epoll_key_find maps them back. */
static inline void after_epoll(const struct epoll_event *ev, int rc)
{
	if (rc <= 0 || !__atomic_load_n(&ctp_fd_table.slots, __ATOMIC_RELAXED))
		return;
	for (int i = 0; i < rc; i++) {
		int fd = ctp_epoll_key_find(ev[i].data.u64);
		struct ctp_fd_slot *s = ctp_fd_slot(fd);
		if (s && __atomic_load_n(&s->station, __ATOMIC_RELAXED))
			ctp_io_ready(fd, s);
	}
}

CTP_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	CTP_REAL(epoll_wait);
	int rc = real_epoll_wait(epfd, ev, max, timeout);
	after_epoll(ev, rc);
	return rc;
}

CTP_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			   const sigset_t *ss)
{
	CTP_REAL(epoll_pwait);
	int rc = real_epoll_pwait(epfd, ev, max, timeout, ss);
	after_epoll(ev, rc);
	return rc;
}

CTP_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			    const struct timespec *timeout, const sigset_t *ss)
{
	CTP_REAL(epoll_pwait2);
	int rc = real_epoll_pwait2(epfd, ev, max, timeout, ss);
	after_epoll(ev, rc);
	return rc;
}

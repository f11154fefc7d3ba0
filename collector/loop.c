/* accept4, F_GET_SEALS, MSG_CMSG_CLOEXEC */
#define _GNU_SOURCE

#include "collector/deferred_stacks.h"
#include "collector/loop.h"
#include "ctp/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/awaited.h"
#include "collector/collector.h"
#include "collector/convert_pacing.h"
#include "collector/harvester.h"
#include "collector/proc.h"
#include "collector/program_waits.h"
#include "collector/records.h"
#include "ctp/jsonw.h"
#include "ctp/trace_file.h"
#include "ctp/wire.h"

/* Two threads: the harvester (collector/harvester.h says why) moves ring records into spools;
 * this thread runs the loop below: connections, converting spooled records into lines,
 * symbolizing, compressing and writing. */

#define CONVERT_TURN (256u << 10)	   /* spooled bytes per process per turn, so none starves */
#define SLEEP_MS 100			   /* at most 100 ms, so that frames are flushed on time */
#define TICK_NS 100000000ull		   /* clock model and frame age checks */
#define HOLDS_WORTH_SAYING_NS 100000000ull /* the summary names holds adding up to this */

enum conn_kind { CONN_NEW, CONN_PROC, CONN_LAUNCHER };

struct conn {
	int fd;
	enum conn_kind kind;
	struct ctp_proc *proc;
	struct conn *next;
};

/* A wait status the launcher reported before the process's connection closed. */
struct app_exit {
	uint32_t pid;
	int status;
	uint64_t ts; /* when the launcher's word came */
};

/* A process that ended without saying how: waiting for the launcher's word. */
struct held_exit {
	uint32_t pid;
	uint64_t ts; /* when it ended, as decide_exit had it */
	uint64_t running[CTP_PROC_MAX_RUNNING];
	size_t nrunning;
};

struct loop {
	const struct ctp_collector_options *o;
	struct ctp_collector c;
	struct ctp_zwriter *z;
	struct ctp_harvester H;
	int ep, lfd, sfd;
	bool listening;	      /* lfd is armed in epoll (disarmed for a while when out of fds) */
	bool said_out_of_fds; /* out_of_fds says so once a run */
	struct conn *conns;
	uint64_t conns_added; /* connections taken so far: accepted, or passed (CTP_MSG_CONNECT) */
	size_t nprocs;
	bool procs_seen, launcher_seen, launcher_open;
	uint64_t launcher_closed_at, all_gone_at, last_tick;
	/* When "ready" went to whoever started us (ctp-run, the preload); 0: nobody waits for it
	 * (started by hand, without --ready-fd). */
	uint64_t ready_at;
	bool stop;
	struct app_exit *app_exits;
	size_t napp_exits, app_exits_cap;
	struct held_exit *held;
	size_t nheld, held_cap;
	struct ctp_awaited awaited; /* processes that may yet say hello (awaited.h) */
	/* Pids whose last traced image exec'd and whose new image has not said hello (yet): a
	 * static or set-ID program, say, which runs untraced. */
	uint32_t *execd;
	size_t nexecd, execd_cap;
	uint8_t *msg; /* receive buffer, CTP_WIRE_MAX bytes */
	struct ctp_convert_pacing pacing;
	int cpu_time_fd; /* this thread's scheduler totals (convert_pacing.h), -1: none */
	int runnable_fd; /* the system's runnable threads (convert_pacing.h), -1: none */
	struct ctp_program_waits program_waits;
};

/* Markers for epoll data that are not connections. */
static char listen_tag, signal_tag, spool_tag;

/* ---- exits ---------------------------------------------------------------------------- */

static void exit_from_wait_status(struct ctp_exit_line *l, int status)
{
	if (WIFEXITED(status)) {
		l->how = CTP_EXITED_STATUS;
		l->value = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		l->how = CTP_EXITED_SIGNAL;
		l->value = WTERMSIG(status);
	} else {
		l->how = CTP_EXITED_UNKNOWN;
	}
}

static bool take_app_exit(struct loop *L, uint32_t pid, struct app_exit *out)
{
	for (size_t i = 0; i < L->napp_exits; i++) {
		if (L->app_exits[i].pid == pid) {
			*out = L->app_exits[i];
			L->app_exits[i] = L->app_exits[--L->napp_exits];
			return true;
		}
	}
	return false;
}

static void write_held(struct loop *L, size_t i, bool have_status, int status)
{
	struct held_exit *h = &L->held[i];
	struct ctp_exit_line l = {.pid = h->pid, .ts = h->ts, .how = CTP_EXITED_UNKNOWN};
	if (have_status)
		exit_from_wait_status(&l, status);
	if (l.how == CTP_EXITED_SIGNAL) {
		l.running = h->running;
		l.nrunning = h->nrunning;
	}
	ctp_emit_exit(&L->c.em, &l);
	L->held[i] = L->held[--L->nheld];
}

/* Pid's new image said hello: it is traced again. */
static void execd_forget(struct loop *L, uint32_t pid)
{
	for (size_t i = 0; i < L->nexecd; i++)
		if (L->execd[i] == pid) {
			L->execd[i] = L->execd[--L->nexecd];
			return;
		}
}

static void execd_add(struct loop *L, uint32_t pid)
{
	execd_forget(L, pid); /* once */
	if (L->nexecd == L->execd_cap) {
		L->execd_cap = L->execd_cap ? L->execd_cap * 2 : 8;
		L->execd = ctp_xrealloc(L->execd, L->execd_cap * sizeof(*L->execd));
	}
	L->execd[L->nexecd++] = pid;
}

/* At the end: a process whose image exec'd a program that never said hello ran on untraced.
 * When it has ended, the trace says so instead of leaving the process without an end: with the
 * status the launcher saw when it was the program it started, else with an unknown status. One
 * still running (a daemon) has no end yet. */
static void write_untraced_ends(struct loop *L)
{
	for (size_t i = 0; i < L->nexecd; i++) {
		struct app_exit a;
		struct ctp_exit_line l = {.pid = L->execd[i], .how = CTP_EXITED_UNKNOWN};
		if (take_app_exit(L, l.pid, &a)) {
			l.ts = a.ts;
			exit_from_wait_status(&l, a.status);
		} else if (ctp_pid_alive(l.pid)) {
			continue;
		}
		ctp_emit_exit(&L->c.em, &l);
	}
	L->nexecd = 0;
}

static void forget_held(struct loop *L, uint32_t pid)
{
	for (size_t i = 0; i < L->nheld; i++)
		if (L->held[i].pid == pid) {
			L->held[i] = L->held[--L->nheld];
			return;
		}
}

static void on_app_exit(struct loop *L, uint32_t pid, int status)
{
	for (size_t i = 0; i < L->nheld; i++)
		if (L->held[i].pid == pid) {
			write_held(L, i, true, status);
			return;
		}
	if (L->napp_exits == L->app_exits_cap) {
		L->app_exits_cap = L->app_exits_cap ? L->app_exits_cap * 2 : 8;
		L->app_exits = ctp_xrealloc(L->app_exits, L->app_exits_cap * sizeof(*L->app_exits));
	}
	L->app_exits[L->napp_exits++] = (struct app_exit){pid, status, ctp_monotonic_ns()};
}

/* Writes how process p ended, or holds it until the launcher has had its say. `gone_ns`: when
 * its connection was seen closed, its end's time unless it recorded a time itself (killed by a
 * signal it had no handler for, say). */
static void decide_exit(struct loop *L, struct ctp_proc *p, uint64_t gone_ns)
{
	if (p->exec_sent)
		return; /* the new image says hello with the same pid */
	struct ctp_exit_line hdr, l;
	bool have_hdr = ctp_proc_header_exit(p, &hdr);
	uint64_t ts = hdr.ts ? hdr.ts : gone_ns;
	struct app_exit a;
	if (take_app_exit(L, p->pid, &a)) {
		l = (struct ctp_exit_line){.pid = p->pid};
		exit_from_wait_status(&l, a.status);
		if (l.how == CTP_EXITED_SIGNAL && have_hdr && hdr.how == CTP_EXITED_SIGNAL) {
			l.tid = hdr.tid;
			l.coro = hdr.coro;
			l.addr = hdr.addr;
		}
	} else if (have_hdr) {
		l = hdr;
	} else if (L->launcher_open || !L->launcher_seen) {
		/* Hold it: the launcher may still report, or (with or without one) the same pid
		 * may say hello again, which makes this end an exec whose EXEC never came. */
		if (L->nheld == L->held_cap) {
			L->held_cap = L->held_cap ? L->held_cap * 2 : 8;
			L->held = ctp_xrealloc(L->held, L->held_cap * sizeof(*L->held));
		}
		struct held_exit *h = &L->held[L->nheld++];
		h->pid = p->pid;
		h->ts = ts;
		h->nrunning = p->nrunning;
		memcpy(h->running, p->running, p->nrunning * sizeof(p->running[0]));
		return;
	} else {
		l = (struct ctp_exit_line){.pid = p->pid, .how = CTP_EXITED_UNKNOWN};
	}
	if (l.how == CTP_EXITED_SIGNAL && !l.coro) {
		l.running = p->running;
		l.nrunning = p->nrunning;
	}
	l.ts = ts;
	ctp_emit_exit(&L->c.em, &l);
}

/* ---- connections ---------------------------------------------------------------------- */

static void drop_conn(struct loop *L, struct conn *cn)
{
	epoll_ctl(L->ep, EPOLL_CTL_DEL, cn->fd, NULL);
	close(cn->fd);
	for (struct conn **pp = &L->conns; *pp; pp = &(*pp)->next)
		if (*pp == cn) {
			*pp = cn->next;
			break;
		}
	free(cn);
}

/* The process with this pid among the connected ones, other than `except`; NULL if none. */
static struct ctp_proc *connected_proc(struct loop *L, uint32_t pid, const struct ctp_proc *except)
{
	for (struct conn *cn = L->conns; cn; cn = cn->next)
		if (cn->kind == CONN_PROC && cn->proc && cn->proc != except && cn->proc->pid == pid)
			return cn->proc;
	return NULL;
}

/* A new connection, whose first packet says what it is (a hello, the launcher's). Returns 1 if
 * taken, 0 if not (the fd is closed). */
static int add_conn(struct loop *L, int fd)
{
	struct conn *cn = calloc(1, sizeof(*cn));
	if (!cn) {
		close(fd);
		return 0;
	}
	cn->fd = fd;
	cn->kind = CONN_NEW;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = cn};
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		free(cn);
		return 0;
	}
	cn->next = L->conns;
	L->conns = cn;
	L->conns_added++;
	return 1;
}

/* The connections passed on a process's connection (fork children's, its next image's), read
 * into n: each is a connection like one accepted on the socket. */
static void adopt_conns(struct loop *L, struct ctp_notices *n)
{
	for (uint32_t i = 0; i < n->nconns; i++)
		add_conn(L, n->conns[i]);
	n->nconns = 0;
}

/* The processes started that notices n name, unless connected now. */
static void await_spawned(struct loop *L, const struct ctp_notices *n, const struct ctp_proc *p)
{
	uint32_t first = n->nspawned > CTP_NOTICES_SPAWNED ? n->nspawned - CTP_NOTICES_SPAWNED : 0;
	for (uint32_t i = first; i < n->nspawned; i++) {
		uint32_t pid = n->spawned[i % CTP_NOTICES_SPAWNED];
		if (!connected_proc(L, pid, p))
			ctp_awaited_add_pid(&L->awaited, pid);
	}
}

/* What process p announced and has not come yet: its exec'd image, the children it started
 * (told to the harvester or to this thread, whichever read the connection). */
static void await_announced(struct loop *L, struct ctp_proc *p)
{
	if (p->exec_sent && !connected_proc(L, p->pid, p)) {
		ctp_awaited_add_pid(&L->awaited, p->pid);
		execd_add(L, p->pid);
	}
	uint32_t forks = p->hv.notices.forks + p->notices.forks;
	if (forks > p->fork_children)
		ctp_awaited_add_forks(&L->awaited, p->pid, forks - p->fork_children);
	await_spawned(L, &p->hv.notices, p);
	await_spawned(L, &p->notices, p);
}

/* A process's connection closed: it is gone (or exec'd). Its mapping still holds everything
 * it wrote: take the rings back from the harvester and drain them here, after whatever the
 * spool still holds. */
static void end_process(struct loop *L, struct conn *cn, bool write_exit)
{
	uint64_t gone_ns = ctp_monotonic_ns(); /* before the drain, which takes a while */
	struct ctp_proc *p = cn->proc;
	ctp_harvester_remove(&L->H, &p->hv, cn->fd);
	ctp_harvest_read_notices(&p->hv); /* what the harvester had not read yet */
	adopt_conns(L, &p->hv.notices);
	if (p->hv.notices.exec)
		p->exec_sent = true;
	await_announced(L, p);
	/* Its memory is gone: the stacks of coroutines suspended at its end are those it
	 * unwound itself in its stations (preload/unwind_saved.c). */
	ctp_deferred_memory_gone(p);
	ctp_proc_drain(p);
	ctp_proc_write_states(p);
	if (write_exit)
		decide_exit(L, p, gone_ns);
	ctp_proc_free(p);
	ctp_harvester_room_freed(&L->H);
	cn->proc = NULL;
	if (--L->nprocs == 0) {
		L->all_gone_at = ctp_monotonic_ns();
		/* Every traced process has gone: what they wrote goes to the file now, not at the
		 * next tick, for a reader who starts right after the program (the plain form's
		 * collector waits a while yet for more processes). */
		ctp_zwriter_flush(L->z);
	}
}

static void conn_closed(struct loop *L, struct conn *cn)
{
	if (cn->kind == CONN_PROC) {
		end_process(L, cn, true);
	} else if (cn->kind == CONN_LAUNCHER) {
		L->launcher_open = false;
		L->launcher_closed_at = ctp_monotonic_ns();
		/* Nobody is left to report how the held processes ended. */
		while (L->nheld)
			write_held(L, L->nheld - 1, false, 0);
	}
	drop_conn(L, cn);
}

/* Out of file descriptors: a process that connects now cannot be taken in (its connection, or
 * the segment it passes, would need one). Said once, with the limit, rather than once a process:
 * a program that starts many processes under a low `ulimit -n` would get a line for each. */
static void out_of_fds(struct loop *L)
{
	if (L->said_out_of_fds)
		return;
	L->said_out_of_fds = true;
	struct rlimit rl;
	char limit[32] = "";
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(limit, sizeof(limit), " (limit %llu)", (unsigned long long)rl.rlim_cur);
	fprintf(stderr,
		"ctp-collector: out of file descriptors%s: processes that start while it lasts "
		"are not traced (raise `ulimit -n`)\n",
		limit);
}

/* Returns false when the connection was dropped. */
static bool on_hello(struct loop *L, struct conn *cn, size_t n, int memfd)
{
	const struct ctp_msg_hello *m = (const struct ctp_msg_hello *)L->msg;
	if (memfd == CTP_FD_NOT_TAKEN) {
		out_of_fds(L);
		conn_closed(L, cn);
		return false;
	}
	if (n < sizeof(*m) || memfd < 0) {
		fprintf(stderr, "ctp-collector: a hello without %s; connection dropped\n",
			memfd < 0 ? "a segment" : "its fields");
		if (memfd >= 0)
			close(memfd);
		conn_closed(L, cn);
		return false;
	}
	char why[200];
	struct ctp_proc *p =
		ctp_proc_open(&L->c, memfd, m->pid, m->ppid, &L->H.budget, why, sizeof(why));
	if (!p) {
		fprintf(stderr, "ctp-collector: pid %u: segment refused: %s; not traced\n", m->pid,
			why);
		close(memfd);
		conn_closed(L, cn);
		return false;
	}
	/* No longer awaited. A fork child whose parent is still connected counts for the parent,
	 * whose FORKED notices are weighed against such children when it goes. */
	bool forked = m->flags & CTP_HELLO_FORKED;
	if (!ctp_awaited_hello(&L->awaited, m->pid, m->ppid, forked) && forked) {
		struct ctp_proc *parent = connected_proc(L, m->ppid, p);
		if (parent)
			parent->fork_children++;
	}
	/* The same pid again: an earlier instance exec'd, whether or not its EXEC arrived. */
	for (struct conn *o = L->conns; o; o = o->next)
		if (o->kind == CONN_PROC && o->proc && o->proc->pid == m->pid) {
			o->proc->exec_sent = true;
			ctp_deferred_memory_gone(o->proc);
		}
	forget_held(L, m->pid);
	execd_forget(L, m->pid);

	size_t len = n - sizeof(*m);
	if (m->strings_len < len)
		len = m->strings_len;
	ctp_emit_process(&L->c.em, m->pid, m->ppid, m->strings, len, m->argc,
			 ctp_proc_stack_depth(p));
	cn->kind = CONN_PROC;
	cn->proc = p;
	/* After the process line: its records are converted after it. */
	ctp_harvester_add(&L->H, &p->hv, cn->fd);
	/* From now on the harvester reads this connection (wakeup bytes, EXEC): were this thread
	 * woken too by every wakeup byte, it would compete for a CPU with the harvester just when
	 * a ring is filling. It watches for the end of the connection only. */
	struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = cn};
	epoll_ctl(L->ep, EPOLL_CTL_MOD, cn->fd, &ev);
	L->nprocs++;
	L->procs_seen = true;
	return true;
}

/* One packet, and the fd passed with it (-1 if none): the segment with a hello, a new
 * connection with CTP_MSG_CONNECT. Returns false when the connection was dropped. */
static bool on_packet(struct loop *L, struct conn *cn, size_t n, int memfd)
{
	if (n == 1 && L->msg[0] == CTP_WAKE_BYTE) {
		if (memfd >= 0)
			close(memfd);
		return true; /* waking us was the point */
	}
	const struct ctp_msg_header *h = (const struct ctp_msg_header *)L->msg;
	uint32_t type = n >= sizeof(*h) && h->magic == CTP_WIRE_MAGIC ? h->type : 0;
	if (cn->kind == CONN_NEW) {
		if (type == CTP_MSG_HELLO)
			return on_hello(L, cn, n, memfd);
		if (memfd >= 0)
			close(memfd);
		if (type == CTP_MSG_LAUNCHER) {
			cn->kind = CONN_LAUNCHER;
			L->launcher_seen = L->launcher_open = true;
			return true;
		}
		fprintf(stderr, "ctp-collector: a connection began with an unknown message; "
				"dropped\n");
		conn_closed(L, cn);
		return false;
	}
	if (cn->kind == CONN_PROC) {
		ctp_notices_take(&cn->proc->notices, L->msg, n, memfd);
		adopt_conns(L, &cn->proc->notices);
	} else if (memfd >= 0) {
		close(memfd);
	}
	if (cn->kind == CONN_PROC && type == CTP_MSG_EXEC) {
		cn->proc->exec_sent = true;
		ctp_deferred_memory_gone(cn->proc);
	} else if (cn->kind == CONN_LAUNCHER && type == CTP_MSG_APP_EXIT &&
		   n >= sizeof(struct ctp_msg_app_exit)) {
		const struct ctp_msg_app_exit *a = (const struct ctp_msg_app_exit *)L->msg;
		on_app_exit(L, a->pid, a->wait_status);
	}
	return true;
}

static void on_readable(struct loop *L, struct conn *cn)
{
	for (;;) {
		int fd;
		ssize_t n = ctp_recv_with_fd(cn->fd, L->msg, CTP_WIRE_MAX, &fd);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			if (fd >= 0)
				close(fd);
			conn_closed(L, cn);
			return;
		}
		if (!on_packet(L, cn, (size_t)n, fd))
			return;
	}
}

/* Takes every connection waiting on the socket. */
static void on_accept(struct loop *L)
{
	for (;;) {
		int fd = accept4(L->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/* Level-triggered: stop listening for a tick instead of spinning.
				 */
				out_of_fds(L);
				epoll_ctl(L->ep, EPOLL_CTL_DEL, L->lfd, NULL);
				L->listening = false;
			}
			return;
		}
		add_conn(L, fd);
	}
}

static size_t count_new_conns(const struct loop *L)
{
	size_t n = 0;
	for (const struct conn *cn = L->conns; cn; cn = cn->next)
		n += cn->kind == CONN_NEW;
	return n;
}

/* Before the run ends: a process may have connected and said hello (and exited since) while
 * the launcher's close overtook its packets, still queued in the listen backlog or unread on a
 * new connection. Takes them in; true when that changed anything, so the run goes on: a
 * connection taken (accepted, or passed on one read here: a fork child's), or one that spoke
 * (a peer that connected and says nothing does not hold the end back). */
static bool take_pending(struct loop *L)
{
	uint64_t added = L->conns_added;
	if (L->listening)
		on_accept(L);
	size_t before = count_new_conns(L);
	for (struct conn *cn = L->conns, *next; cn; cn = next) {
		next = cn->next;
		if (cn->kind == CONN_NEW)
			on_readable(L, cn);
	}
	return L->conns_added != added || count_new_conns(L) < before;
}

/* ---- converting and the loop ---------------------------------------------------------- */

/* One turn over every process's spool. True when spooled records still wait. */
static bool convert_turn(struct loop *L)
{
	if (ctp_harvester_pending(&L->H) == 0)
		return false;
	for (struct conn *cn = L->conns; cn; cn = cn->next)
		if (cn->kind == CONN_PROC)
			ctp_proc_convert(cn->proc, CONVERT_TURN);
	ctp_harvester_room_freed(&L->H);
	return ctp_harvester_pending(&L->H) > 0;
}

static void tick(struct loop *L, uint64_t now)
{
	if (now - L->last_tick < TICK_NS)
		return;
	L->last_tick = now;
	if (L->c.have_tsc)
		ctp_tsc_model_update(&L->c.tsc);
	for (struct conn *cn = L->conns; cn; cn = cn->next)
		if (cn->kind == CONN_PROC)
			ctp_proc_release_ordered(cn->proc);
	ctp_zwriter_tick(L->z, now);
	if (!L->listening) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
		L->listening = epoll_ctl(L->ep, EPOLL_CTL_ADD, L->lfd, &ev) == 0;
	}
}

/* How often, while every traced process has gone, whether an awaited one may still come is
 * looked at again. */
#define AWAIT_POLL_MS 10

/* Milliseconds until the run must end (-1: no deadline), 0 when it is over. */
static int64_t ms_to_finish(struct loop *L, uint64_t now)
{
	uint64_t grace = (uint64_t)L->o->grace_ms * 1000000u;
	uint64_t since;
	if (L->stop)
		return 0;
	if (L->launcher_seen) {
		/* The program ctp-run started has ended: processes still connected (a daemon)
		 * may run on for the grace period; with none, the run ends at once unless one
		 * that was announced (an exec'd image, a child) may still come. */
		if (L->launcher_open)
			return -1;
		if (L->nprocs == 0 && !ctp_awaited_any(&L->awaited))
			return 0;
		since = L->launcher_closed_at;
	} else if (L->procs_seen) {
		/* Without a launcher (the preload started us itself), end once every traced
		 * process has gone: at once unless one that was announced may still come, and at
		 * the latest when none has come within the grace period. */
		if (L->nprocs > 0)
			return -1;
		if (!ctp_awaited_any(&L->awaited))
			return 0;
		since = L->all_gone_at;
	} else {
		/* Nobody came yet. Whoever started us connects right after "ready": when none did
		 * within the grace period, it died in between, and nobody will. Started by hand,
		 * wait for the first process however long it takes. */
		if (L->ready_at == 0)
			return -1;
		since = L->ready_at;
	}
	if (now - since >= grace)
		return 0;
	int64_t left = (int64_t)((grace - (now - since) + 999999) / 1000000);
	/* Awaiting announced processes: whether they are still alive is looked at again soon. */
	if (L->procs_seen && L->nprocs == 0 && left > AWAIT_POLL_MS)
		return AWAIT_POLL_MS;
	return left;
}

/* SIGUSR1: a snapshot of every traced process into the trace now, in a frame of its own so that
 * a reader of the live trace sees it at once (docs/trace-format.md, `snapshot`). */
static void write_snapshots(struct loop *L)
{
	for (struct conn *cn = L->conns; cn; cn = cn->next)
		if (cn->kind == CONN_PROC)
			ctp_proc_write_snapshot(cn->proc,
						ctp_harvester_harvest_now(&L->H, &cn->proc->hv));
	ctp_harvester_room_freed(&L->H);
	ctp_zwriter_flush(L->z);
}

static void on_signal(struct loop *L)
{
	struct signalfd_siginfo si;
	bool snapshot = false;
	while (read(L->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			snapshot = true;
		else
			L->stop = true;
	}
	if (snapshot && !L->stop)
		write_snapshots(L);
}

/* Whether to convert now (convert_pacing.h): not while the CPUs are busy and the records can
 * wait. They cannot once the launcher has gone: the run is ending. */
static bool convert_now(struct loop *L, uint64_t now)
{
	bool ending =
		L->stop || (L->launcher_seen && !L->launcher_open) || ms_to_finish(L, now) == 0;
	return ctp_convert_pacing_convert_now(&L->pacing, now, ctp_harvester_pending(&L->H),
					      ending);
}

/* The traced processes' threads' waits for a CPU: of the first CTP_PROGRAM_WAITS_MAX_THREADS
 * processes at most, as no more threads are followed. */
static uint64_t read_program_waits(void *ctx)
{
	struct loop *L = ctx;
	uint32_t pids[CTP_PROGRAM_WAITS_MAX_THREADS];
	size_t n = 0;
	for (struct conn *cn = L->conns; cn && n < CTP_PROGRAM_WAITS_MAX_THREADS; cn = cn->next)
		if (cn->kind == CONN_PROC && cn->proc && !cn->proc->exec_sent)
			pids[n++] = cn->proc->pid;
	return ctp_program_waits_read(&L->program_waits, pids, n, ctp_monotonic_ns());
}

static void pacing_turn_done(struct loop *L)
{
	struct ctp_cpu_time t;
	if (!L->pacing.enabled || !ctp_cpu_time_read(L->cpu_time_fd, &t))
		return;
	uint32_t harvester = !__atomic_load_n(&L->H.waiting, __ATOMIC_RELAXED);
	ctp_convert_pacing_turn_done(&L->pacing, ctp_monotonic_ns(), ctp_harvester_pending(&L->H),
				     &t, ctp_runnable_others(L->runnable_fd, harvester));
}

/* The connections the harvester read on processes' connections since the last look. */
static void adopt_harvested_conns(struct loop *L)
{
	int fds[CTP_NOTICES_CONNS];
	size_t n;
	while ((n = ctp_harvester_take_conns(&L->H, fds, CTP_NOTICES_CONNS)) > 0)
		for (size_t i = 0; i < n; i++)
			add_conn(L, fds[i]);
}

static void run_loop(struct loop *L)
{
	struct epoll_event evs[64];
	for (;;) {
		bool converting = convert_now(L, ctp_monotonic_ns());
		bool more = converting && convert_turn(L);
		if (converting)
			pacing_turn_done(L);
		uint64_t now = ctp_monotonic_ns();
		tick(L, now);
		int64_t left = ms_to_finish(L, now);
		if (left == 0 && !take_pending(L))
			return;
		if (left == 0)
			continue;
		/* Sleep only with less than a batch spooled; the harvester wakes us when there is
		 * more (harvester.h). While conversion holds back, until its next probe, and the
		 * harvester is not asked to wake us. */
		int timeout = 0;
		if (!converting) {
			timeout = ctp_convert_pacing_wait_ms(&L->pacing, now);
		} else if (!more) {
			timeout = ctp_harvester_main_sleep_ms(&L->H, SLEEP_MS);
		}
		if (left > 0 && left < timeout)
			timeout = (int)left;
		int n = epoll_wait(L->ep, evs, 64, timeout);
		ctp_harvester_main_woke(&L->H);
		adopt_harvested_conns(L);
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;
			if (tag == &listen_tag)
				on_accept(L);
			else if (tag == &signal_tag)
				on_signal(L);
			else if (tag != &spool_tag)
				on_readable(L, tag);
		}
	}
}

/* The socket, and with --remove-socket-dir its directory (made for this run by the preload's
 * plain form), go away at the end. */
static void remove_socket(const struct ctp_collector_options *o)
{
	unlink(o->socket_path);
	if (!o->remove_socket_dir)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", o->socket_path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		rmdir(dir); /* only when empty: anything else in it is not ours to remove */
	}
}

/* The end: processes still connected are drained and their state written as it stands. */
static void finish(struct loop *L)
{
	while (L->conns) {
		struct conn *cn = L->conns;
		if (cn->kind == CONN_PROC)
			end_process(L, cn, false);
		drop_conn(L, cn);
	}
	while (L->nheld)
		write_held(L, L->nheld - 1, false, 0);
	write_untraced_ends(L);
}

/* ---- setup ---------------------------------------------------------------------------- */

static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ctp-collector: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "ctp-collector: socket: %s\n", strerror(errno));
		return -1;
	}
	/* The socket file is created by bind with the umask: make it 0600 from the start. */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || listen(fd, 64) != 0) {
		fprintf(stderr, "ctp-collector: cannot listen on %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static bool setup(struct loop *L)
{
	/* Each traced process holds a connection and a memfd: allow as many as we may. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit (ulimit -f) must fail our writes with EFBIG, which the writer counts
	 * and reports, not kill us with the trace's end unwritten. */
	signal(SIGXFSZ, SIG_IGN);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1); /* a snapshot into the trace: write_snapshots */
	sigprocmask(SIG_BLOCK, &set, NULL);
	L->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	L->ep = epoll_create1(EPOLL_CLOEXEC);
	if (L->sfd < 0 || L->ep < 0) {
		fprintf(stderr, "ctp-collector: %s\n", strerror(errno));
		return false;
	}
	L->lfd = listen_on(L->o->socket_path);
	if (L->lfd < 0)
		return false;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
	struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &signal_tag};
	struct epoll_event dev = {.events = EPOLLIN, .data.ptr = &spool_tag};
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, L->lfd, &ev) != 0 ||
	    epoll_ctl(L->ep, EPOLL_CTL_ADD, L->sfd, &sev) != 0 ||
	    epoll_ctl(L->ep, EPOLL_CTL_ADD, L->H.data_fd, &dev) != 0) {
		fprintf(stderr, "ctp-collector: epoll: %s\n", strerror(errno));
		return false;
	}
	L->listening = true;
	return true;
}

static void human_size(char *buf, size_t len, uint64_t n)
{
	if (n >= 1000000)
		snprintf(buf, len, "%.1f MB", (double)n / 1e6);
	else if (n >= 1000)
		snprintf(buf, len, "%.1f kB", (double)n / 1e3);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)n);
}

int ctp_collector_run(const struct ctp_collector_options *o)
{
	struct loop L = {.o = o, .ep = -1, .lfd = -1, .sfd = -1};
	uint64_t start = ctp_monotonic_ns();
	L.msg = malloc(CTP_WIRE_MAX);
	if (!L.msg || !ctp_harvester_start(&L.H, o->spool_bytes) || !setup(&L))
		return 1;
	char why[512];
	int out_fd = ctp_trace_file_create(o->output, why, sizeof(why));
	L.z = out_fd < 0 ? NULL : ctp_zwriter_open_fd(out_fd, o->output, o->level);
	if (!L.z) {
		if (out_fd >= 0)
			snprintf(why, sizeof(why), "%s: %s", o->output, strerror(errno));
		fprintf(stderr, "ctp-collector: cannot create the trace %s\n", why);
		remove_socket(o);
		ctp_harvester_stop(&L.H);
		return 1;
	}
	L.c.sym = ctp_symbolizer_new();
	ctp_emit_init(&L.c.em, L.z);
	ctp_emit_trace(&L.c.em, start);
	L.last_tick = ctp_monotonic_ns();
	if (o->ready_fd >= 0) {
		ssize_t w = write(o->ready_fd, "ready\n", 6);
		/* Whoever started us stopped waiting (the preload gives up after 2 s, then runs
		 * the program untraced): no process will come. The trace says so, and ends. */
		if (w < 0 && errno == EPIPE)
			L.stop = true;
		close(o->ready_fd);
		L.ready_at = ctp_monotonic_ns();
	}
	/* What takes time comes after "ready", off the program's start: the program runs while
	 * the collector stocks its spool (its hello waits in the socket). */
#if defined(__x86_64__) || defined(__i386__)
	/* Segments that record raw TSC readings are converted with our own measure of its
	 * rate, refined every tick: measured from now to the first conversion, without waiting
	 * (ctp_collector_tsc). */
	ctp_tsc_model_begin(&L.c.tsc);
	L.c.have_tsc = true;
#endif
	ctp_harvester_room_freed(&L.H); /* stocks the spool's pool once chunks are needed */
	struct ctp_cpu_time cpu_now;
	L.cpu_time_fd = o->hold_ms ? ctp_cpu_time_open() : -1;
	bool have_cpu_time = L.cpu_time_fd >= 0 && ctp_cpu_time_read(L.cpu_time_fd, &cpu_now);
	L.runnable_fd = o->hold_ms ? ctp_runnable_open() : -1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ctp_program_waits_init(&L.program_waits, "/proc");
	ctp_convert_pacing_init(&L.pacing, (uint64_t)o->hold_ms, o->spool_bytes,
				have_cpu_time ? &cpu_now : NULL, cpus > 0 ? (uint32_t)cpus : 1,
				(struct ctp_program_waited){read_program_waits, &L});

	run_loop(&L);
	finish(&L);
	ctp_harvester_stop(&L.H);
	ctp_emit_end(&L.c.em);

	struct ctp_zwriter_stats st;
	bool ok = ctp_zwriter_close(L.z, &st);
	if (st.lost_lines)
		fprintf(stderr, "ctp-collector: %llu trace lines could not be written to %s\n",
			(unsigned long long)st.lost_lines, o->output);
	if (o->summary) {
		char size[32];
		human_size(size, sizeof(size), st.file_bytes);
		char unwritten[64] = "";
		if (st.lost_lines)
			snprintf(unwritten, sizeof(unwritten), ", %llu lines NOT WRITTEN",
				 (unsigned long long)st.lost_lines);
		const struct ctp_emitter *em = &L.c.em;
		fprintf(stderr,
			"ctp: %llu process%s, %llu coroutine%s and %llu thread%s, %llu switch%s, "
			"%llu event%s lost%s, %s (%s)\n",
			(unsigned long long)em->processes, em->processes == 1 ? "" : "es",
			(unsigned long long)em->coros, em->coros == 1 ? "" : "s",
			(unsigned long long)em->threads, em->threads == 1 ? "" : "s",
			(unsigned long long)em->switches, em->switches == 1 ? "" : "es",
			(unsigned long long)em->lost, em->lost == 1 ? "" : "s", unwritten,
			o->output, size);
	}
	/* Holds that added up to less than a live reader's refresh delayed nothing anyone saw;
	 * a short run on a busy machine often has one of a few ms, and a line saying "0.0 s"
	 * is noise that reads like a warning. */
	if (o->summary && L.pacing.held_ns >= HOLDS_WORTH_SAYING_NS)
		fprintf(stderr,
			"ctp: the CPUs were busy: conversion held back %llu time%s, %.1f s in all "
			"(--hold-ms)\n",
			(unsigned long long)L.pacing.holds, L.pacing.holds == 1 ? "" : "s",
			(double)L.pacing.held_ns / 1e9);
	/* A hold the spool ended left the converter to catch up beside a program that keeps every
	 * CPU busy: the one setting that would have spared the program that time is the spool's. */
	if (o->summary && L.pacing.spool_ends) {
		/* In KiB for a quarter of a spool of 1-3 MiB, which would read "0 MiB". */
		bool in_mib = L.pacing.hold_bytes >= 1u << 20;
		fprintf(stderr,
			"ctp: conversion held back for the busy CPUs until a quarter of the spool "
			"(%llu %s) waited (%llu time%s), and then shared the CPUs with the "
			"program; a larger spool holds longer (CTP_SPOOL_MB, --spool-mb)\n",
			(unsigned long long)(L.pacing.hold_bytes >> (in_mib ? 20 : 10)),
			in_mib ? "MiB" : "KiB", (unsigned long long)L.pacing.spool_ends,
			L.pacing.spool_ends == 1 ? "" : "s");
	}
	/* The rings take the records while the spool is full, and drop only what they cannot
	 * hold: a full spool lost nothing where the rings were large enough (the words must not
	 * say otherwise). */
	if (L.H.full_waits) {
		const struct ctp_emitter *em = &L.c.em;
		char lost[96] = "none was lost";
		if (em->lost)
			snprintf(lost, sizeof(lost),
				 "%llu event%s %s lost in all (counted in the trace)",
				 (unsigned long long)em->lost, em->lost == 1 ? "" : "s",
				 em->lost == 1 ? "was" : "were");
		fprintf(stderr,
			"ctp-collector: the spool reached its limit of %llu MiB; the rings held "
			"records meanwhile, and %s\n",
			(unsigned long long)(__atomic_load_n(&L.H.budget.limit, __ATOMIC_SEQ_CST) >>
					     20),
			lost);
	}
	if (L.c.corrupt_rings)
		fprintf(stderr, "ctp-collector: %llu corrupt ring%s skipped\n",
			(unsigned long long)L.c.corrupt_rings,
			L.c.corrupt_rings == 1 ? " was" : "s were");
	remove_socket(o);
	ctp_symbolizer_free(L.c.sym);
	if (L.cpu_time_fd >= 0)
		close(L.cpu_time_fd);
	if (L.runnable_fd >= 0)
		close(L.runnable_fd);
	ctp_program_waits_free(&L.program_waits);
	close(L.lfd);
	close(L.sfd);
	close(L.ep);
	free(L.msg);
	free(L.app_exits);
	free(L.held);
	ctp_awaited_free(&L.awaited);
	free(L.execd);
	return ok ? 0 : 1;
}

#include "collector/harvester.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ctp/clock.h"
#include "ctp/xalloc.h"

#define RING_BUDGET (256u << 10) /* bytes per ring per pass, so that no ring starves others */
/* Pacing. A pass that found records is followed by another at once only when a ring was
 * crowded (a quarter of its capacity taken, or cut short by the budget); otherwise by a nap: a
 * busy ring is emptied in batches, rather than by a thread that spins on it and takes a CPU from
 * the program (on 2 cores, a spinning harvester made a 2-thread Boost.Fiber program twice as
 * slow), and rather than when it is half full, which leaves the other half for the times the
 * harvester waits for a CPU (measured on 2 loaded cores: it halved the loss of a 1.6 M
 * switches/s ping-pong). The nap adapts, from NAP_MIN_MS to NAP_MAX_MS: it doubles while passes
 * take less than a sixteenth of a ring and halves when they take an eighth or more, since each
 * nap costs a wakeup (~15 us on a small VM: at a nap a millisecond, 40% of a busy harvester's
 * time). A nap longer than the shortest raises the sleep flag, so that a ring filling half
 * meanwhile wakes the harvester at once (CTP.md "Wakeup"). After NAPS passes that found nothing
 * the harvester sleeps for good, flag raised. */
#define NAPS 10
#define NAP_MIN_MS 1
#define NAP_MAX_MS 8
#define FILL_CROWDED (CTP_HARVEST_FILL_ONE / 4)
#define FILL_MORE_NAP (CTP_HARVEST_FILL_ONE / 16)
#define FILL_LESS_NAP (CTP_HARVEST_FILL_ONE / 8)
#define SLEEP_MS 100 /* CTP.md "Wakeup": at most 100 ms */
/* A pass may add, per ring, RING_BUDGET plus one record and a batch header: two chunks. The
 * harvester takes from a ring only while the budget has that much room, so the spools never
 * hold more than their limit. */
#define RING_TURN_ROOM (2u * CTP_SPOOL_CHUNK)

static void poke(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));
	(void)w; /* EAGAIN: the counter is already non-zero, the reader wakes anyway */
}

static void drain_eventfd(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));
	(void)r;
}

/* A batch waits, or the main thread has not been woken for a while (harvester.h). */
static void wake_main(struct ctp_harvester *H)
{
	uint64_t now = ctp_monotonic_ns();
	if (ctp_harvester_pending(H) < CTP_CONVERT_BATCH &&
	    now - H->last_poke_ns < CTP_CONVERT_DELAY_MS * 1000000ull)
		return;
	if (__atomic_exchange_n(&H->main_waits, 0, __ATOMIC_SEQ_CST)) {
		H->last_poke_ns = now;
		poke(H->data_fd);
	}
}

static bool spools_full(struct ctp_harvester *H)
{
	return ctp_spool_budget_room(&H->budget) < RING_TURN_ROOM;
}

/* One pass over every ring of every process. *full is set when the spools filled up, *fill to
 * the largest share of a ring taken (ctp_harvest_rings). */
static uint64_t pass(struct ctp_harvester *H, bool *full, uint32_t *fill)
{
	uint64_t got = 0;
	*full = false;
	*fill = 0;
	pthread_mutex_lock(&H->lock);
	for (size_t i = 0; i < H->nprocs && !*full; i++) {
		struct ctp_harvest *h = H->procs[i];
		if (spools_full(H)) {
			*full = true;
			break;
		}
		got += ctp_harvest_rings(h, RING_BUDGET, fill);
	}
	pthread_mutex_unlock(&H->lock);
	/* After any pass, not only one that found records: a wakeup put off by the delay is owed
	 * until it is made. */
	if (__atomic_load_n(&H->main_waits, __ATOMIC_SEQ_CST) && ctp_harvester_pending(H) > 0)
		wake_main(H);
	return got;
}

static void set_sleep_all(struct ctp_harvester *H, uint32_t v)
{
	pthread_mutex_lock(&H->lock);
	for (size_t i = 0; i < H->nprocs; i++)
		ctp_harvest_set_sleep(H->procs[i], v);
	pthread_mutex_unlock(&H->lock);
}

static bool registered(struct ctp_harvester *H, struct ctp_harvest *h)
{
	for (size_t i = 0; i < H->nprocs; i++)
		if (H->procs[i] == h)
			return true;
	return false;
}

uint64_t ctp_harvester_harvest_now(struct ctp_harvester *H, struct ctp_harvest *h)
{
	uint64_t began = 0;
	pthread_mutex_lock(&H->lock);
	if (registered(H, h) && h->header && !spools_full(H)) {
		began = ctp_harvest_clock_now(h);
		ctp_harvest_rings(h, 0, NULL);
	}
	pthread_mutex_unlock(&H->lock);
	return began;
}

size_t ctp_harvester_take_conns(struct ctp_harvester *H, int *fds, size_t cap)
{
	if (!__atomic_exchange_n(&H->conns_read, 0, __ATOMIC_SEQ_CST))
		return 0;
	size_t n = 0;
	pthread_mutex_lock(&H->lock);
	for (size_t i = 0; i < H->nprocs; i++) {
		struct ctp_notices *notices = &H->procs[i]->notices;
		while (notices->nconns > 0 && n < cap)
			fds[n++] = notices->conns[--notices->nconns];
		if (notices->nconns > 0)
			__atomic_store_n(&H->conns_read, 1, __ATOMIC_SEQ_CST); /* more next time */
	}
	pthread_mutex_unlock(&H->lock);
	return n;
}

static void wait_events(struct ctp_harvester *H, int timeout_ms)
{
	struct epoll_event evs[16];
	__atomic_store_n(&H->waiting, 1, __ATOMIC_RELAXED);
	int n = epoll_wait(H->ep, evs, 16, timeout_ms);
	bool conns_read = false;
	__atomic_store_n(&H->waiting, 0, __ATOMIC_RELAXED);
	/* Under the lock: a process the main thread took back meanwhile is not touched, and
	 * an EXEC read here is noted before the main thread looks (ctp_harvester_remove). */
	pthread_mutex_lock(&H->lock);
	for (int i = 0; i < n; i++) {
		struct ctp_harvest *h = evs[i].data.ptr;
		if (!h)
			drain_eventfd(H->ctl_fd);
		else if (registered(H, h) && ctp_harvest_read_notices(h) > 0)
			conns_read = true;
	}
	pthread_mutex_unlock(&H->lock);
	if (conns_read) {
		/* The new process waits for nothing, but its records do: wake the main thread. */
		__atomic_store_n(&H->conns_read, 1, __ATOMIC_SEQ_CST);
		poke(H->data_fd);
	}
}

/* The nap after a pass that took `fill` of a ring, its length adapted (see Pacing above). */
static void nap(struct ctp_harvester *H, int *nap_ms, uint32_t fill)
{
	if (fill >= FILL_LESS_NAP && *nap_ms > NAP_MIN_MS)
		*nap_ms /= 2;
	else if (fill < FILL_MORE_NAP && *nap_ms < NAP_MAX_MS)
		*nap_ms *= 2;
	if (*nap_ms == NAP_MIN_MS) {
		wait_events(H, NAP_MIN_MS);
		return;
	}
	set_sleep_all(H, 1);
	wait_events(H, *nap_ms);
	set_sleep_all(H, 0);
}

static void *harvester_main(void *arg)
{
	struct ctp_harvester *H = arg;
	int naps = NAPS;
	int nap_ms = NAP_MIN_MS;
	while (!__atomic_load_n(&H->stop, __ATOMIC_SEQ_CST)) {
		bool full;
		uint32_t fill = 0;
		if (spools_full(H)) {
			full = true;
		} else if (pass(H, &full, &fill) > 0) {
			naps = 0;
			if (fill < FILL_CROWDED && !full)
				nap(H, &nap_ms, fill);
			continue;
		}
		if (full) {
			/* Leave the rings alone until the main thread has converted some of the
			 * spool; it pokes ctl_fd when there is room again. */
			__atomic_add_fetch(&H->full_waits, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&H->blocked, 1, __ATOMIC_SEQ_CST);
			if (spools_full(H))
				wait_events(H, SLEEP_MS);
			__atomic_store_n(&H->blocked, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		if (naps < NAPS) {
			naps++;
			nap_ms = NAP_MIN_MS;
			wait_events(H, NAP_MIN_MS);
			continue;
		}
		/* CTP.md "Wakeup": raise the flag, then look once more so that a record
		 * published just before the flag was seen is not left waiting. */
		set_sleep_all(H, 1);
		if (pass(H, &full, &fill) == 0 && !full)
			wait_events(H, SLEEP_MS);
		set_sleep_all(H, 0);
	}
	return NULL;
}

bool ctp_harvester_start(struct ctp_harvester *H, uint64_t limit_bytes)
{
	memset(H, 0, sizeof(*H));
	pthread_mutex_init(&H->lock, NULL);
	ctp_spool_budget_init(&H->budget, limit_bytes);
	/* The pool of touched chunks is stocked by the main thread once the collector said it is
	 * ready (ctp_harvester_room_freed), and only once the harvester has needed a chunk: its
	 * page faults are no part of start-up. */
	H->ep = epoll_create1(EPOLL_CLOEXEC);
	H->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	H->data_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (H->ep < 0 || H->ctl_fd < 0 || H->data_fd < 0 ||
	    epoll_ctl(H->ep, EPOLL_CTL_ADD, H->ctl_fd, &ev) != 0) {
		fprintf(stderr, "ctp-collector: harvester: %s\n", strerror(errno));
		return false;
	}
	/* The harvester takes no signal: the main thread reads SIGTERM, SIGINT and SIGUSR1 from a
	 * signalfd, and a process-directed signal goes to a thread that does not block it, where
	 * its default action would end the collector without a drain. The thread inherits the
	 * mask it is created with. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&H->thread, NULL, harvester_main, H);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		fprintf(stderr, "ctp-collector: cannot start the harvester thread: %s\n",
			strerror(rc));
		return false;
	}
	H->started = true;
	return true;
}

void ctp_harvester_stop(struct ctp_harvester *H)
{
	if (H->started) {
		__atomic_store_n(&H->stop, 1, __ATOMIC_SEQ_CST);
		poke(H->ctl_fd);
		pthread_join(H->thread, NULL);
		H->started = false;
	}
	if (H->ep >= 0)
		close(H->ep);
	if (H->ctl_fd >= 0)
		close(H->ctl_fd);
	if (H->data_fd >= 0)
		close(H->data_fd);
	H->ep = H->ctl_fd = H->data_fd = -1;
	free(H->procs);
	H->procs = NULL;
	pthread_mutex_destroy(&H->lock);
	ctp_spool_budget_fini(&H->budget);
}

void ctp_harvester_add(struct ctp_harvester *H, struct ctp_harvest *h, int sock)
{
	pthread_mutex_lock(&H->lock);
	if (H->nprocs == H->procs_cap) {
		H->procs_cap = H->procs_cap ? H->procs_cap * 2 : 8;
		H->procs = ctp_xrealloc(H->procs, H->procs_cap * sizeof(*H->procs));
	}
	h->sock = sock;
	H->procs[H->nprocs++] = h;
	pthread_mutex_unlock(&H->lock);
	/* Every packet the process sends wakes the harvester, which reads it. Edge-triggered:
	 * the end of the connection, reported for as long as it lasts, is the main thread's. */
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = h};
	epoll_ctl(H->ep, EPOLL_CTL_ADD, sock, &ev);
	poke(H->ctl_fd);
}

void ctp_harvester_remove(struct ctp_harvester *H, struct ctp_harvest *h, int sock)
{
	epoll_ctl(H->ep, EPOLL_CTL_DEL, sock, NULL);
	pthread_mutex_lock(&H->lock);
	for (size_t i = 0; i < H->nprocs; i++)
		if (H->procs[i] == h) {
			H->procs[i] = H->procs[--H->nprocs];
			break;
		}
	pthread_mutex_unlock(&H->lock);
}

int ctp_harvester_main_sleep_ms(struct ctp_harvester *H, int idle_ms)
{
	__atomic_store_n(&H->main_waits, 1, __ATOMIC_SEQ_CST);
	uint64_t pending = ctp_harvester_pending(H);
	if (pending == 0)
		return idle_ms;
	if (pending < CTP_CONVERT_BATCH)
		return idle_ms < CTP_CONVERT_DELAY_MS ? idle_ms : CTP_CONVERT_DELAY_MS;
	__atomic_store_n(&H->main_waits, 0, __ATOMIC_SEQ_CST);
	return 0;
}

void ctp_harvester_main_woke(struct ctp_harvester *H)
{
	__atomic_store_n(&H->main_waits, 0, __ATOMIC_SEQ_CST);
	drain_eventfd(H->data_fd);
}

/* Chunks the pool grows by in one pass of the converter: 1 MiB of page faults. */
enum { STOCK_PER_PASS = 4 };

void ctp_harvester_room_freed(struct ctp_harvester *H)
{
	ctp_spool_budget_stock_some(&H->budget, STOCK_PER_PASS);
	if (__atomic_load_n(&H->blocked, __ATOMIC_SEQ_CST) && !spools_full(H) &&
	    __atomic_exchange_n(&H->blocked, 0, __ATOMIC_SEQ_CST))
		poke(H->ctl_fd);
}

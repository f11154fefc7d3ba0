/* The harvester thread. The collector runs two threads because turning records into lines can
 * stall for tens of milliseconds (the first lookup in a module loads its symbols and DWARF, a
 * burst of new stacks, a slow disk), while a traced thread switching a million times a second
 * fills its ring (4 MiB by default; 256 KiB until it first fills half of it, ctp/CTP.md "Rings")
 * in a few milliseconds and then drops records. So one thread does nothing but move published
 * records out of every ring into a private spool (and sleeps, with the segments' sleep flags
 * set, when there is nothing to move), and the other -- the collector's main thread -- converts
 * spooled records into lines, symbolizes, compresses and writes, and handles the connections.
 *
 * The spools together hold at most `limit` bytes: when they are full the harvester stops taking
 * from the rings, which then fill and drop records, counted as always. */
#ifndef CTP_COLLECTOR_HARVESTER_H
#define CTP_COLLECTOR_HARVESTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/harvest.h"
#include "collector/spool.h"

struct ctp_harvester {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* guards procs: the harvester holds it for a pass */
	struct ctp_harvest **procs;
	size_t nprocs, procs_cap;
	int ep;	     /* the harvester's epoll: ctl_fd and every process socket (edge-triggered) */
	int ctl_fd;  /* eventfd, main -> harvester: a new process, room in the spools, stop */
	int data_fd; /* eventfd, harvester -> main: spooled records wait (main epolls it) */
	struct ctp_spool_budget budget;
	/* atomics */
	uint32_t stop;
	uint32_t main_waits;   /* the main thread is about to sleep: wake it through data_fd */
	uint64_t last_poke_ns; /* when the harvester last woke the main thread (its own) */
	uint32_t blocked;      /* the harvester waits for room in the spools: wake it via ctl_fd */
	uint64_t full_waits;   /* times the spools were full */
	uint32_t waiting;      /* the thread sleeps in epoll_wait: not among the runnable */
	uint32_t conns_read;   /* a process's notices hold connections passed (CTP_MSG_CONNECT) */
};

/* Starts the thread. False (with a message on stderr) when it cannot. */
bool ctp_harvester_start(struct ctp_harvester *H, uint64_t limit_bytes);
/* Stops and joins the thread, closes its fds. Every process must have been removed. */
void ctp_harvester_stop(struct ctp_harvester *H);

/* Hands a process's rings to the harvester; `sock` is its connection, whose packets (wakeup
 * bytes, EXEC) the harvester reads from now on. */
void ctp_harvester_add(struct ctp_harvester *H, struct ctp_harvest *h, int sock);
/* Takes them back: when this returns the harvester no longer touches `h` (h->notices are
 * final), and the caller may harvest it and read its socket itself (the final drain). */
void ctp_harvester_remove(struct ctp_harvester *H, struct ctp_harvest *h, int sock);

/* Main thread: up to cap connections passed on processes' connections (CTP_MSG_CONNECT: fork
 * children's, new images') that the harvester read, into fds; how many. The harvester wakes the
 * main thread when it reads one. */
size_t ctp_harvester_take_conns(struct ctp_harvester *H, int *fds, size_t cap);

/* Main thread: empties every ring of h into its spool now, between two of the harvester's
 * passes (a snapshot must follow every record published before it). Returns the process's
 * clock when it began, before which every record is spooled; 0 when h is not the harvester's,
 * is not mapped, or the spools are full (then nothing is taken). */
uint64_t ctp_harvester_harvest_now(struct ctp_harvester *H, struct ctp_harvest *h);

/* Converting in batches: each wakeup of the main thread costs it a context switch (~15 us on
 * a small VM, 10% of its time when the harvester woke it after each of its passes, a thousand
 * times a second). So the harvester, after each of its passes, wakes the sleeping main thread
 * when CTP_CONVERT_BATCH bytes wait, or when anything waits and it last woke it
 * CTP_CONVERT_DELAY_MS or more ago; and the main thread, when less than a batch waits, sleeps
 * at most that delay. Records then wait at most about CTP_CONVERT_DELAY_MS to be converted, far
 * less than the reorder queue keeps them anyway (proc.c), while a busy run's main thread wakes
 * a hundred times a second. */
#define CTP_CONVERT_BATCH (1u << 20)
#define CTP_CONVERT_DELAY_MS 10

/* Main thread, before it sleeps: how long it may, in ms (0: not at all, a batch waits;
 * `idle_ms` when nothing does). The harvester writes data_fd when there is more to do. */
int ctp_harvester_main_sleep_ms(struct ctp_harvester *H, int idle_ms);
/* Main thread, after it woke up (for whatever reason). */
void ctp_harvester_main_woke(struct ctp_harvester *H);
/* Main thread, after it converted records: wakes a harvester that waits for room. */
void ctp_harvester_room_freed(struct ctp_harvester *H);

/* Spooled bytes not yet converted. */
static inline uint64_t ctp_harvester_pending(struct ctp_harvester *H)
{
	return __atomic_load_n(&H->budget.pending, __ATOMIC_SEQ_CST);
}

#endif

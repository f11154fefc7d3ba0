/* The coroutines of one process that ended, once the collector has converted their last events.
 * Their final `state` lines come only at the process's end (docs/trace-format.md), and a server
 * that makes a coroutine per request (pdns-recursor) makes millions of them while it runs: kept
 * in the coroutine table, they took 128-256 bytes each there, 1M of them 200 MB. Here each takes
 * 24 bytes in a log that goes to an unlinked temporary file a block at a time, and one bit in a
 * set of ids, which tells a late record naming one of them from a coroutine never seen (it must
 * not be announced, nor get a second state line). */
#ifndef CTP_COLLECTOR_ENDED_COROS_H
#define CTP_COLLECTOR_ENDED_COROS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What its final state line needs: the rest of it is fixed for an ended coroutine. */
struct ctp_ended_coro {
	uint64_t id;
	uint64_t since; /* ns of its last switch or its end; 0 = unknown */
	uint32_t tid;
	uint32_t switches;
};

struct ctp_ended_coros {
	/* The set of ids: pages of bits, by id / CTP_ENDED_PAGE_IDS, in an open-addressed table
	 * (ids are dense in a process, so a page holds thousands). */
	struct ctp_ended_page *pages;
	size_t pages_cap, npages;
	/* The log: the records not yet written to the file, then those in it. */
	struct ctp_ended_coro *buf;
	size_t nbuf, buf_cap;
	int fd;		  /* the temporary file; -1 until the first block is written */
	uint64_t in_file; /* records in it */
	bool memory_only; /* the file could not be made or written: the log stays in memory */
};

enum { CTP_ENDED_PAGE_IDS = 4096, CTP_ENDED_BLOCK = 32768 /* records written at once */ };

void ctp_ended_coros_init(struct ctp_ended_coros *e);
void ctp_ended_coros_free(struct ctp_ended_coros *e);

/* Whether `id` was added. */
bool ctp_ended_coros_has(const struct ctp_ended_coros *e, uint64_t id);

/* Adds an ended coroutine (not added before). When the temporary file cannot be made or
 * written, says so once on stderr and keeps the log in memory: nothing is lost. */
void ctp_ended_coros_add(struct ctp_ended_coros *e, const struct ctp_ended_coro *c);

/* Calls fn on each, in the order added. Returns false, having said why on stderr, when some
 * could not be read back from the file (fn was called on every other one). */
bool ctp_ended_coros_each(struct ctp_ended_coros *e,
			  void (*fn)(const struct ctp_ended_coro *c, void *ctx), void *ctx);

#endif

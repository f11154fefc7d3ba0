/* One traced process's rings as the harvester thread sees them: its own mappings of the
 * segment's header and of each ring (collector/block_window.h), and the spool their records are
 * moved to. Harvesting copies whole
 * published records out of each ring into the spool, frees the ring (advances its tail) and
 * notes how many records the producer dropped since the last look; nothing more, so that it
 * keeps up with the producers whatever the converting thread is busy with.
 *
 * What goes into the spool is a sequence of batches, each a header and then records exactly as
 * they were in one ring (PAD records left out). The loss counted for a ring goes into the last
 * batch of that ring's turn, after its records: in the order the converter must report it. */
#ifndef CTP_COLLECTOR_HARVEST_H
#define CTP_COLLECTOR_HARVEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/block_window.h"
#include "collector/spool.h"
#include "ctp/segment_view.h"

enum {
	CTP_BATCH_CORRUPT = 1,	 /* the ring's head, tail or a record size was impossible:
				    its unread records were skipped */
	CTP_BATCH_MALFORMED = 2, /* a record's size changed while it was copied: left out */
};

/* batch.ring of a pass marker, written after each pass over the process's rings that took
 * anything: every record stamped before `complete_before` (the segment's clock), but for ones in
 * flight (stamped, not yet published), is in this batch or before it. That is when the pass
 * began, or earlier when it left records in a ring (cut short by its budget): the time of the
 * last record it took there, since a ring's records come in time order. */
#define CTP_SPOOL_PASS UINT32_MAX

struct ctp_spool_batch {
	uint32_t ring;	/* index of the ring in the process (stable: rings are never removed) */
	uint32_t owner; /* the ring's owner when it was first found (thread of its first records) */
	uint32_t bytes; /* records that follow */
	uint32_t flags; /* CTP_BATCH_* */
	union {
		uint64_t lost; /* records the producer dropped, after this batch's records */
		uint64_t complete_before; /* of a pass marker (above) */
	};
};
_Static_assert(sizeof(struct ctp_spool_batch) % 8 == 0, "records after a batch stay aligned");

/* A ring no thread owns (its thread ended, or moved to a bigger ring) and that is read to its end
 * is parked after CTP_HARVEST_PARK_AFTER_NS so: its window is given back but for the page of its
 * header, watched at each pass for a new owner or new records; the whole window is mapped again
 * when either comes. A thread that grows its ring twice leaves 4.25 MiB of outgrown rings, which
 * the harvester otherwise kept mapped under the program's address-space limit, for nothing. */
#define CTP_HARVEST_PARK_AFTER_NS 1000000000ull

struct ctp_harvest_ring {
	uint64_t off;			/* block offset in the segment */
	struct ctp_block_window window; /* not mapped yet: tried again at every pass */
	struct ctp_ring_ref ref;	/* in window, once mapped; stale while parked */
	uint32_t owner;
	uint64_t last_dropped; /* ring->dropped when last looked at */
	uint64_t unstored;     /* records lost for want of spool memory, not yet in a batch */
	uint64_t idle_since;   /* when it was last seen free and read to its end; 0: it was not */
	bool parked;	       /* window holds its header alone */
	bool unsound;	       /* the block is no ring that can be read: never harvested */
};

#define CTP_NOTICES_SPAWNED 64
#define CTP_NOTICES_CONNS 64

/* What a traced process announced on its connection after its hello (ctp/wire.h): its exec,
 * how many times it forked, and the pids of the latest CTP_NOTICES_SPAWNED processes it
 * started (the i-th at spawned[i % CTP_NOTICES_SPAWNED]); and the connections passed on it
 * (CTP_MSG_CONNECT: its fork children's, its next image's), until the main thread takes them. Both
 * the harvester and the main thread read the connection, each into notices of its own. */
struct ctp_notices {
	uint32_t exec; /* EXEC seen */
	uint32_t forks;
	uint32_t spawned[CTP_NOTICES_SPAWNED];
	uint32_t nspawned;
	int conns[CTP_NOTICES_CONNS];
	uint32_t nconns;
};

/* Notes `packet` (len bytes) in n when it is a notice. fd: the one passed with it, or -1; n
 * keeps it when the packet passes a connection, and closes it otherwise. */
void ctp_notices_take(struct ctp_notices *n, const void *packet, size_t len, int fd);

struct ctp_harvest {
	int memfd; /* not owned */
	uint32_t pid;
	struct ctp_header *header; /* the harvester's mapping of it; NULL once unmapped */
	uint64_t walked_head;	   /* header.blocks_head when the block list was last walked */
	struct ctp_harvest_ring *rings;
	size_t nrings, rings_cap;
	uint32_t unmapped;	/* rings found whose window could not be mapped yet */
	uint32_t parked;	/* rings parked now */
	uint64_t park_after_ns; /* CTP_HARVEST_PARK_AFTER_NS (tests set their own) */
	bool unmapped_said;	/* a failure to map one was said */
	struct ctp_spool spool;
	int sock; /* the process's connection, read by the harvester while it has it */
	/* What the harvester read on sock; the main thread reads it once it took h back. */
	struct ctp_notices notices;
	/* The last pass left records in a ring, cut short by its budget (atomic): the rings are
	 * behind, and time alone says nothing of what they still hold (proc.c). */
	uint32_t cut_short;
};

/* recvmsg of one packet on socket sock, without waiting, into buf (size bytes); *fd is the fd
 * passed with it (the first; any other is closed), -1 if none, CTP_FD_NOT_TAKEN if one was
 * passed and the kernel could not give it to us (out of file descriptors: MSG_CTRUNC). */
enum { CTP_FD_NOT_TAKEN = -2 };
ssize_t ctp_recv_with_fd(int sock, void *buf, size_t size, int *fd);

/* Reads what the process sent on sock after its hello: wakeup bytes (their arrival was the
 * point) and notices, into h->notices. The harvester's, while it has the process. Returns how
 * many connections it took in (CTP_MSG_CONNECT). */
uint32_t ctp_harvest_read_notices(struct ctp_harvest *h);

/* Maps the segment's header for harvesting. False, with a reason, when it cannot. */
bool ctp_harvest_init(struct ctp_harvest *h, int memfd, uint32_t pid, struct ctp_spool_budget *b,
		      char *why, size_t why_len);
/* Unmaps the header and the rings, once nothing more is to be harvested. */
void ctp_harvest_unmap(struct ctp_harvest *h);
/* Unmaps and frees the spool (whatever it still holds). */
void ctp_harvest_fini(struct ctp_harvest *h);

/* The process's clock (its segment's: TSC ticks or monotonic ns) now. The header must be
 * mapped. */
uint64_t ctp_harvest_clock_now(const struct ctp_harvest *h);

/* Finds the rings added since the last pass and maps them (and those it could not map before:
 * a failure is said once on stderr), then moves at most about `budget` bytes per ring (0 =
 * everything there is) into the spool, and each ring's new loss. Returns the ring bytes taken.
 * *fill (may be NULL) is raised to the largest share of one ring's capacity the pass took, in
 * 1/CTP_HARVEST_FILL_ONE; a ring cut short by the budget counts as full. The harvester paces its
 * naps by it. */
uint64_t ctp_harvest_rings(struct ctp_harvest *h, uint64_t budget, uint32_t *fill);
#define CTP_HARVEST_FILL_ONE 256u

/* Stores the sleep flag into the segment (sequentially consistent; CTP.md "Wakeup"). */
void ctp_harvest_set_sleep(struct ctp_harvest *h, uint32_t v);

#endif

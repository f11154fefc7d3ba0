#include "collector/harvest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collector/rec_copy.h"
#include "collector/reorder.h"
#include "ctp/xalloc.h"
#include "ctp/atomics.h"
#include "ctp/clock.h"
#include "ctp/ring.h"
#include "ctp/wire.h"

bool ctp_harvest_init(struct ctp_harvest *h, int memfd, uint32_t pid, struct ctp_spool_budget *b,
		      char *why, size_t why_len)
{
	memset(h, 0, sizeof(*h));
	h->memfd = memfd;
	h->pid = pid;
	h->header = ctp_header_map(memfd, why, why_len);
	if (!h->header)
		return false;
	ctp_spool_init(&h->spool, b);
	h->park_after_ns = CTP_HARVEST_PARK_AFTER_NS;
	return true;
}

void ctp_harvest_unmap(struct ctp_harvest *h)
{
	for (size_t i = 0; i < h->nrings; i++)
		ctp_block_window_unmap(&h->rings[i].window);
	ctp_header_unmap(h->header);
	h->header = NULL;
}

void ctp_harvest_fini(struct ctp_harvest *h)
{
	ctp_harvest_unmap(h);
	ctp_spool_free(&h->spool);
	free(h->rings);
	h->rings = NULL;
	h->nrings = 0;
}

static bool ring_mapped(const struct ctp_harvest_ring *r)
{
	return r->window.view.base != NULL;
}

/* The harvester walks the blocks for the rings; the station chunks are the converter's. A ring
 * is noted when found and mapped at the pass (map_rings). */
static void note_ring_block(void *ctx, uint32_t kind, uint64_t off)
{
	struct ctp_harvest *h = ctx;
	if (kind != CTP_BLOCK_RING)
		return;
	if (h->nrings == h->rings_cap) {
		h->rings_cap = h->rings_cap ? h->rings_cap * 2 : 8;
		h->rings = ctp_xrealloc(h->rings, h->rings_cap * sizeof(*h->rings));
	}
	h->rings[h->nrings++] = (struct ctp_harvest_ring){.off = off};
	h->unmapped++;
}

static bool ring_check(const struct ctp_segment_view *v, struct ctp_block *b, uint64_t off,
		       void *ref)
{
	return ctp_view_ring(v, b, off, ref);
}

/* Maps the rings not mapped yet: the new ones, and those whose mapping failed before (the first
 * failure is said; the ring's records wait in it, or are dropped, counted, once it is full). A
 * block that is no sound ring is left out for good. */
static void map_rings(struct ctp_harvest *h)
{
	for (size_t i = 0; i < h->nrings && h->unmapped; i++) {
		struct ctp_harvest_ring *r = &h->rings[i];
		if (ring_mapped(r) || r->unsound)
			continue;
		enum ctp_window_outcome got =
			ctp_block_window_open(h->memfd, r->off, &r->window, ring_check, &r->ref,
					      h->pid, "ring", &h->unmapped_said);
		if (got == CTP_WINDOW_LATER)
			continue;
		h->unmapped--;
		if (got == CTP_WINDOW_MAPPED)
			r->owner = CTP_LOAD_RELAXED(&r->ref.ring->owner);
		else
			r->unsound = true;
	}
}

/* Finds the rings added since the last look (a new list head means new blocks) and maps every
 * ring not mapped yet. */
static void follow_growth(struct ctp_harvest *h)
{
	uint64_t head = CTP_LOAD_ACQUIRE(&h->header->blocks_head);
	if (head != h->walked_head) {
		size_t known = h->nrings;
		ctp_file_blocks(h->memfd, head, h->walked_head, note_ring_block, h);
		h->walked_head = head;
		/* The walk goes from the newest block to the oldest; harvest rings oldest first.
		 * Records of a thread that started later often name coroutines an older thread
		 * created (an M:N scheduler's main thread creates, its workers run them): in one
		 * pass the creation is then read first. */
		ctp_blocks_oldest_first(h->rings, known, h->nrings, sizeof(*h->rings));
	}
	if (h->unmapped)
		map_rings(h);
}

/* Whether a ring has nothing to read and nobody to write more: no owner, read to its end. */
static bool ring_idle(const struct ctp_ring *ring)
{
	return CTP_LOAD_RELAXED(&ring->owner) == 0 &&
	       CTP_LOAD_ACQUIRE(&ring->head) == CTP_LOAD_RELAXED(&ring->tail);
}

/* Parks r (harvest.h) once it has been idle, all its loss said, for park_after_ns; `now` is the
 * pass's clock, read at its first need (0 until then). */
static void park_if_idle(struct ctp_harvest *h, struct ctp_harvest_ring *r, uint64_t *now)
{
	if (!ring_idle(r->ref.ring) || r->unstored) {
		r->idle_since = 0;
		return;
	}
	if (!*now)
		*now = ctp_monotonic_ns();
	if (!r->idle_since)
		r->idle_since = *now;
	if (*now - r->idle_since < h->park_after_ns)
		return;
	struct ctp_block_window header = {0};
	if (!ctp_block_window_open_head(h->memfd, r->off, sizeof(struct ctp_ring), &header))
		return; /* it keeps its window; tried again at the next pass */
	ctp_block_window_unmap(&r->window);
	r->window = header;
	r->parked = true;
	h->parked++;
}

/* Maps a parked ring whole again once a thread has claimed it or written into it. False while
 * it stays parked: nothing to read yet, or no room to map it (tried again at the next pass; its
 * records wait in it meanwhile, or are dropped, counted, once it is full). */
static bool unpark(struct ctp_harvest *h, struct ctp_harvest_ring *r)
{
	if (ring_idle((const struct ctp_ring *)ctp_block_window_block(&r->window, r->off)))
		return false;
	struct ctp_block_window whole = {0};
	enum ctp_window_outcome got = ctp_block_window_open(
		h->memfd, r->off, &whole, ring_check, &r->ref, h->pid, "ring", &h->unmapped_said);
	if (got == CTP_WINDOW_LATER)
		return false;
	ctp_block_window_unmap(&r->window);
	r->parked = false;
	r->idle_since = 0;
	h->parked--;
	if (got == CTP_WINDOW_NEVER) {
		r->unsound = true;
		return false;
	}
	r->window = whole;
	return true;
}

/* Copying one ring's turn into the spool: records go into the open batch while it has room. */
struct copy_ctx {
	struct ctp_harvest *h;
	struct ctp_harvest_ring *r;
	uint32_t index;
	uint8_t *room; /* the open batch, NULL when none */
	size_t room_len;
	size_t used;	/* bytes of the open batch, its header included */
	size_t last_at; /* where in the open batch the last record copied begins */
	uint32_t flags;
	uint64_t unstored; /* records taken from the ring that the spool had no memory for */
};

static struct ctp_spool_batch *batch_of(struct copy_ctx *c)
{
	return (struct ctp_spool_batch *)c->room;
}

/* False when memory ran out for it (ctp_spool_write_room). */
static bool open_batch(struct copy_ctx *c, size_t min)
{
	c->room = ctp_spool_write_room(&c->h->spool, sizeof(struct ctp_spool_batch) + min,
				       &c->room_len);
	if (!c->room)
		return false;
	struct ctp_spool_batch *b = batch_of(c);
	b->ring = c->index;
	b->owner = c->r->owner;
	b->bytes = 0;
	b->flags = 0;
	b->lost = 0;
	c->used = sizeof(*b);
	return true;
}

static void close_batch(struct copy_ctx *c)
{
	struct ctp_spool_batch *b = batch_of(c);
	b->bytes = (uint32_t)(c->used - sizeof(*b));
	b->flags = c->flags;
	c->flags = 0;
	ctp_spool_commit(&c->h->spool, c->used);
	c->room = NULL;
}

static void copy_visit(void *ctx, const struct ctp_rec *rec)
{
	struct copy_ctx *c = ctx;
	/* ctp_ring_consume checked the size it read; the process may have changed it since, so
	 * read it once more and check that the copy stays inside the ring. */
	uint32_t size = __atomic_load_n(&rec->size, __ATOMIC_RELAXED);
	uint64_t pos = (uint64_t)((const uint8_t *)rec - c->r->ref.data);
	if (size < sizeof(*rec) || size % 8 != 0 || size > c->r->ref.capacity - pos) {
		c->flags |= CTP_BATCH_MALFORMED;
		return;
	}
	if (c->room && c->room_len - c->used < size)
		close_batch(c);
	if (!c->room && !open_batch(c, size)) {
		c->unstored++; /* counted as lost, as the ring counts what it drops */
		return;
	}
	uint8_t *dst = c->room + c->used;
	ctp_rec_copy(dst, rec, size);
	((struct ctp_rec *)dst)->size = (uint16_t)size;
	c->last_at = c->used;
	c->used += size;
}

uint64_t ctp_harvest_clock_now(const struct ctp_harvest *h)
{
	return CTP_LOAD_RELAXED(&h->header->clock_kind) == CTP_CLOCK_TSC ? ctp_tsc()
									 : ctp_monotonic_ns();
}

uint64_t ctp_harvest_rings(struct ctp_harvest *h, uint64_t budget, uint32_t *fill)
{
	if (!h->header)
		return 0;
	follow_growth(h);
	/* What the pass's marker vouches for (CTP_SPOOL_PASS), known unless a ring it cut short
	 * ended on a record with no time. */
	uint64_t complete_before = ctp_harvest_clock_now(h);
	bool bounded = true;
	bool whole = true; /* every ring emptied, none cut short by the budget */
	uint64_t total = 0;
	uint64_t now = 0; /* read when a ring may be parked */
	for (size_t i = 0; i < h->nrings; i++) {
		struct ctp_harvest_ring *r = &h->rings[i];
		if (!ring_mapped(r) || (r->parked && !unpark(h, r)))
			continue;
		struct copy_ctx c = {.h = h, .r = r, .index = (uint32_t)i};
		uint64_t n = 0;
		enum ctp_ring_status st = ctp_ring_consume(
			r->ref.ring, r->ref.data, r->ref.capacity, budget, copy_visit, &c, &n);
		total += n;
		if (budget && n >= budget) {
			/* The records left in the ring were stamped no earlier than the last one
			 * taken, which is still in the open batch. */
			whole = false;
			uint64_t ts;
			if (c.room &&
			    ctp_rec_ts((const struct ctp_rec *)(c.room + c.last_at), &ts)) {
				if (ts < complete_before)
					complete_before = ts;
			} else {
				bounded = false;
			}
		}
		if (fill && r->ref.capacity) {
			uint64_t share = (budget && n >= budget)
						 ? CTP_HARVEST_FILL_ONE
						 : n * CTP_HARVEST_FILL_ONE / r->ref.capacity;
			if (share > *fill)
				*fill = (uint32_t)(share < CTP_HARVEST_FILL_ONE
							   ? share
							   : CTP_HARVEST_FILL_ONE);
		}
		if (st == CTP_RING_CORRUPT)
			c.flags |= CTP_BATCH_CORRUPT;
		/* Loss is exact: the producer counts every record it could not write. Read after
		 * the records, it belongs after them. */
		uint64_t dropped = CTP_LOAD_RELAXED(&r->ref.ring->dropped);
		uint64_t lost = dropped > r->last_dropped ? dropped - r->last_dropped : 0;
		r->last_dropped = dropped;
		lost += r->unstored + c.unstored;
		r->unstored = 0;
		if (!c.room && (lost || c.flags))
			open_batch(&c, 0);
		if (c.room) {
			batch_of(&c)->lost = lost;
			close_batch(&c);
		} else {
			r->unstored = lost; /* said with the ring's next batch */
		}
		park_if_idle(h, r, &now);
	}
	__atomic_store_n(&h->cut_short, !whole, __ATOMIC_RELEASE);
	if (total == 0) {
		ctp_spool_trim(&h->spool);
	} else if (bounded) {
		/* Tells the converter how far the records are complete (collector/reorder.h), also
		 * after a pass cut short: a ring that stays behind for many passes would otherwise
		 * keep every record of every ring from leaving the converter's queue. */
		size_t room_len;
		uint8_t *room =
			ctp_spool_write_room(&h->spool, sizeof(struct ctp_spool_batch), &room_len);
		if (room) { /* else the next pass's mark says it, later */
			*(struct ctp_spool_batch *)room = (struct ctp_spool_batch){
				.ring = CTP_SPOOL_PASS, .complete_before = complete_before};
			ctp_spool_commit(&h->spool, sizeof(struct ctp_spool_batch));
		}
	}
	return total;
}

void ctp_harvest_set_sleep(struct ctp_harvest *h, uint32_t v)
{
	if (h->header)
		__atomic_store_n(&h->header->sleep_flag, v, __ATOMIC_SEQ_CST);
}

void ctp_notices_take(struct ctp_notices *n, const void *packet, size_t len, int fd)
{
	struct ctp_msg_spawned m; /* the largest notice */
	if (len < sizeof(m.h) || len > sizeof(m)) {
		if (fd >= 0)
			close(fd);
		return; /* a wakeup byte, or no notice */
	}
	memcpy(&m, packet, len);
	bool ours = m.h.magic == CTP_WIRE_MAGIC;
	if (ours && m.h.type == CTP_MSG_CONNECT && fd >= 0 && n->nconns < CTP_NOTICES_CONNS) {
		n->conns[n->nconns++] = fd;
		return;
	}
	/* Not a connection, or too many not taken yet: that process runs untraced. */
	if (fd >= 0)
		close(fd);
	if (!ours)
		return;
	if (m.h.type == CTP_MSG_EXEC) {
		n->exec = 1;
	} else if (m.h.type == CTP_MSG_FORKED) {
		n->forks++;
	} else if (m.h.type == CTP_MSG_SPAWNED && len == sizeof(m)) {
		n->spawned[n->nspawned % CTP_NOTICES_SPAWNED] = m.pid;
		n->nspawned++;
	}
}

/* The fd passed with a packet (the first one; any other is closed), -1 if none. */
static int passed_fd(struct msghdr *mh)
{
	int kept = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (kept < 0)
				kept = fd;
			else
				close(fd);
		}
	}
	return kept;
}

ssize_t ctp_recv_with_fd(int sock, void *buf, size_t size, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	*fd = n >= 0 ? passed_fd(&mh) : -1;
	if (n >= 0 && *fd < 0 && (mh.msg_flags & MSG_CTRUNC))
		*fd = CTP_FD_NOT_TAKEN;
	return n;
}

uint32_t ctp_harvest_read_notices(struct ctp_harvest *h)
{
	uint32_t before = h->notices.nconns;
	for (;;) {
		struct ctp_msg_spawned m;
		int fd;
		ssize_t n = ctp_recv_with_fd(h->sock, &m, sizeof(m), &fd);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (fd >= 0)
				close(fd);
			return h->notices.nconns - before;
		}
		ctp_notices_take(&h->notices, &m, (size_t)n, fd);
	}
}

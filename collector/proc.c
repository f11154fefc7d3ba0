/* accept4, F_GET_SEALS, MSG_CMSG_CLOEXEC */
#define _GNU_SOURCE

#include "collector/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/records.h"
#include "ctp/atomics.h"
#include "ctp/ring.h"

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fputs("ctp-collector: out of memory\n", stderr);
		abort();
	}
	return p;
}

static const struct ctp_header *header(const struct ctp_proc *p)
{
	return (const struct ctp_header *)p->view.base;
}

/* Maps the whole file as it is now. The file cannot shrink (F_SEAL_SHRINK), so every byte of
 * the mapping stays readable for as long as we hold it. */
static bool map_segment(struct ctp_proc *p, char *why, size_t why_len)
{
	struct stat st;
	if (fstat(p->memfd, &st) != 0) {
		snprintf(why, why_len, "fstat: %s", strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct ctp_header)) {
		snprintf(why, why_len, "segment file of %lld bytes", (long long)st.st_size);
		return false;
	}
	if ((uint64_t)st.st_size == p->view.size)
		return true;
	void *base =
		mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, why_len, "mmap of %lld bytes: %s", (long long)st.st_size,
			 strerror(errno));
		return false;
	}
	if (p->view.base)
		munmap(p->view.base, p->view.size);
	p->view.base = base;
	p->view.size = (uint64_t)st.st_size;
	p->need_walk = true;
	return true;
}

struct ctp_proc *ctp_proc_open(struct ctp_collector *c, int memfd, uint32_t pid, uint32_t ppid,
			       char *why, size_t why_len)
{
	int seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0) {
		snprintf(why, why_len, "not a sealable memfd (%s)", strerror(errno));
		return NULL;
	}
	if (!(seals & F_SEAL_SHRINK)) {
		snprintf(why, why_len, "segment is not sealed against shrinking");
		return NULL;
	}
	struct ctp_proc *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	p->c = c;
	p->pid = pid;
	p->ppid = ppid;
	p->memfd = memfd;
	if (!map_segment(p, why, why_len)) {
		free(p);
		return NULL;
	}
	if (!ctp_view_check_header(&p->view, why, why_len)) {
		munmap(p->view.base, p->view.size);
		free(p);
		return NULL;
	}
	p->clock_kind = header(p)->clock_kind;
	p->seen_segment_size = p->view.size;
	ctp_symcache_read_modules(&p->syms, &p->view);
	ctp_symcache_warm(&p->syms, c->sym);
	return p;
}

void ctp_proc_free(struct ctp_proc *p)
{
	if (p->view.base)
		munmap(p->view.base, p->view.size);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->rings);
	free(p->chunk_offs);
	ctp_coro_table_free(&p->coros);
	ctp_stack_table_free(&p->stacks);
	ctp_symcache_free(&p->syms);
	free(p);
}

static struct ctp_ring_state *ring_at(struct ctp_proc *p, uint64_t off)
{
	for (size_t i = 0; i < p->nrings; i++)
		if (p->rings[i].off == off)
			return &p->rings[i];
	return NULL;
}

static void walk_visit(void *ctx, struct ctp_block *b, uint64_t off)
{
	struct ctp_proc *p = ctx;
	uint32_t kind = CTP_LOAD_RELAXED(&b->kind);
	if (kind == CTP_BLOCK_RING) {
		struct ctp_ring_ref ref;
		if (!ctp_view_ring(&p->view, b, off, &ref))
			return;
		struct ctp_ring_state *rs = ring_at(p, off);
		if (!rs) {
			if (p->nrings == p->rings_cap) {
				p->rings_cap = p->rings_cap ? p->rings_cap * 2 : 8;
				p->rings = xrealloc(p->rings, p->rings_cap * sizeof(*p->rings));
			}
			rs = &p->rings[p->nrings++];
			memset(rs, 0, sizeof(*rs));
			rs->off = off;
			rs->tid = CTP_LOAD_RELAXED(&ref.ring->owner);
		}
		rs->ref = ref;
		rs->live = true;
	} else if (kind == CTP_BLOCK_STATIONS) {
		struct ctp_chunk_ref ref;
		if (!ctp_view_station_chunk(&p->view, b, off, &ref))
			return;
		if (p->nchunks == p->chunks_cap) {
			p->chunks_cap = p->chunks_cap ? p->chunks_cap * 2 : 8;
			p->chunk_offs = xrealloc(p->chunk_offs, p->chunks_cap * sizeof(uint64_t));
		}
		p->chunk_offs[p->nchunks++] = off;
	}
}

void ctp_proc_walk_blocks(struct ctp_proc *p)
{
	for (size_t i = 0; i < p->nrings; i++)
		p->rings[i].live = false;
	p->nchunks = 0;
	p->walked_head = CTP_LOAD_ACQUIRE(&header(p)->blocks_head);
	ctp_view_blocks(&p->view, walk_visit, p);
	p->need_walk = false;
}

/* Follows the segment's growth: a bigger committed size means new blocks may lie beyond our
 * mapping. */
static void follow_growth(struct ctp_proc *p)
{
	uint64_t size = CTP_LOAD_ACQUIRE(&header(p)->segment_size);
	if (size > p->view.size && size != p->seen_segment_size) {
		p->seen_segment_size = size;
		char why[160];
		if (!map_segment(p, why, sizeof(why)))
			fprintf(stderr,
				"ctp-collector: pid %u: cannot follow the segment's growth: %s\n",
				p->pid, why);
	}
	if (p->need_walk || CTP_LOAD_ACQUIRE(&header(p)->blocks_head) != p->walked_head)
		ctp_proc_walk_blocks(p);
}

static void report_corrupt(struct ctp_proc *p, struct ctp_ring_state *rs, const char *what)
{
	p->c->corrupt_rings++;
	if (!p->corrupt_warned) {
		p->corrupt_warned = true;
		fprintf(stderr,
			"ctp-collector: pid %u: %s in the ring of thread %u; its unread records "
			"were "
			"skipped (further ones in this process are counted, not reported)\n",
			p->pid, what, rs->tid);
	}
	ctp_emit_loss(&p->c->em, p->pid, rs->tid, 0, "corrupt ring");
}

uint64_t ctp_proc_harvest(struct ctp_proc *p, uint64_t budget)
{
	if (!p->view.base)
		return 0;
	follow_growth(p);
	uint64_t total = 0;
	for (size_t i = 0; i < p->nrings; i++) {
		struct ctp_ring_state *rs = &p->rings[i];
		if (!rs->live)
			continue;
		struct ctp_visit_ctx vc = {.p = p, .rs = rs};
		uint64_t n = 0;
		enum ctp_ring_status st =
			ctp_ring_consume(rs->ref.ring, rs->ref.data, rs->ref.capacity, budget,
					 ctp_records_visit, &vc, &n);
		total += n;
		if (st == CTP_RING_CORRUPT)
			report_corrupt(p, rs, "impossible head, tail or record size");
		else if (vc.malformed)
			report_corrupt(p, rs, "a record shorter than its contents");
		/* Loss is exact: the producer counts every record it could not write. */
		uint64_t dropped = CTP_LOAD_RELAXED(&rs->ref.ring->dropped);
		if (dropped > rs->last_dropped)
			ctp_emit_loss(&p->c->em, p->pid, rs->tid, dropped - rs->last_dropped, NULL);
		rs->last_dropped = dropped;
	}
	return total;
}

void ctp_proc_drain(struct ctp_proc *p)
{
	/* A dead process's rings empty in one pass; a live one (finishing after the grace
	 * period) may keep writing, so stop after a few passes. */
	for (int pass = 0; pass < 16; pass++)
		if (ctp_proc_harvest(p, 0) == 0)
			break;
}

void ctp_proc_set_sleep(struct ctp_proc *p, uint32_t v)
{
	if (!p->view.base)
		return;
	struct ctp_header *h = (struct ctp_header *)p->view.base;
	__atomic_store_n(&h->sleep_flag, v, __ATOMIC_SEQ_CST);
}

/* F_GET_SEALS */
#define _GNU_SOURCE

#include "collector/proc.h"
#include "collector/deferred_stacks.h"
#include "ctp/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/records.h"
#include "collector/block_window.h"
#include "ctp/atomics.h"

/* The final drain takes this much per ring and pass, converting in between, so that the spool
 * stays small however full the process's rings are. */
#define DRAIN_TURN (256u << 10)
/* Passes of the final drain: a dead process's rings empty within capacity / DRAIN_TURN of
 * them; a live one (still writing after the grace period) is cut off after this many. */
#define DRAIN_PASSES 256

static const struct ctp_header *header(const struct ctp_proc *p)
{
	return (const struct ctp_header *)p->view.base;
}

static void read_modules(void *ctx, struct ctp_symcache *c);

struct ctp_proc *ctp_proc_open(struct ctp_collector *c, int memfd, uint32_t pid, uint32_t ppid,
			       struct ctp_spool_budget *budget, char *why, size_t why_len)
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
	ctp_ended_coros_init(&p->ended);
	struct ctp_header *h = ctp_header_map(memfd, why, why_len);
	if (!h) {
		free(p);
		return NULL;
	}
	p->view = (struct ctp_segment_view){.base = (uint8_t *)h, .size = sizeof(*h)};
	if (!ctp_view_check_header(&p->view, why, why_len) ||
	    !ctp_harvest_init(&p->hv, memfd, pid, budget, why, why_len)) {
		ctp_header_unmap(h);
		free(p);
		return NULL;
	}
	p->clock_kind = header(p)->clock_kind;
	p->modules = (struct ctp_module_source){.read = read_modules, .ctx = p};
	ctp_proc_follow_growth(p);
	read_modules(p, &p->syms);
	return p;
}

static void unmap_chunks(struct ctp_proc *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		ctp_block_window_unmap(&p->chunks[i].window);
	for (size_t i = 0; i < p->nmod_chunks; i++)
		ctp_block_window_unmap(&p->mod_chunks[i].window);
	p->nchunks = p->nmod_chunks = 0;
	p->chunk_hint.count = 0;
}

void ctp_proc_free(struct ctp_proc *p)
{
	ctp_deferred_memory_gone(p);
	ctp_deferred_free(p);
	ctp_harvest_fini(&p->hv);
	unmap_chunks(p);
	ctp_header_unmap((struct ctp_header *)p->view.base);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->rings);
	free(p->chunks);
	free(p->mod_chunks);
	ctp_coro_table_free(&p->coros);
	ctp_ended_coros_free(&p->ended);
	ctp_stack_table_free(&p->stacks);
	ctp_reorder_free(&p->order);
	ctp_symcache_free(&p->syms);
	free(p);
}

/* The converter's blocks are the station and module chunks; the rings are the harvester's. A
 * chunk is noted when found and mapped by map_chunks. */
static void note_block(void *ctx, uint32_t kind, uint64_t off)
{
	struct ctp_proc *p = ctx;
	if (kind == CTP_BLOCK_STATIONS) {
		if (p->nchunks == p->chunks_cap) {
			p->chunks_cap = p->chunks_cap ? p->chunks_cap * 2 : 8;
			p->chunks = ctp_xrealloc(p->chunks, p->chunks_cap * sizeof(*p->chunks));
		}
		p->chunks[p->nchunks++] = (struct ctp_proc_chunk){.off = off};
		p->unmapped++;
	} else if (kind == CTP_BLOCK_MODULES) {
		if (p->nmod_chunks == p->mod_chunks_cap) {
			p->mod_chunks_cap = p->mod_chunks_cap ? p->mod_chunks_cap * 2 : 4;
			p->mod_chunks = ctp_xrealloc(p->mod_chunks,
						     p->mod_chunks_cap * sizeof(*p->mod_chunks));
		}
		p->mod_chunks[p->nmod_chunks++] = (struct ctp_proc_mod_chunk){.off = off};
		p->unmapped++;
	}
}

struct station_check {
	const struct ctp_header *h;
	struct ctp_chunk_ref *ref;
};

static bool station_check(const struct ctp_segment_view *v, struct ctp_block *b, uint64_t off,
			  void *arg)
{
	struct station_check *sc = arg;
	return ctp_view_station_chunk(v, sc->h, b, off, sc->ref);
}

/* Maps a chunk found and not mapped yet (checked by `check`), or marks it unsound; one that
 * cannot be mapped is tried again at the next look. */
static void open_chunk(struct ctp_proc *p, uint64_t off, struct ctp_block_window *w, bool *unsound,
		       ctp_block_check_fn check, void *arg, const char *what)
{
	enum ctp_window_outcome got = ctp_block_window_open(p->memfd, off, w, check, arg, p->pid,
							    what, &p->unmapped_said);
	if (got == CTP_WINDOW_LATER)
		return;
	p->unmapped--;
	*unsound = got == CTP_WINDOW_NEVER;
}

static void map_chunks(struct ctp_proc *p)
{
	for (size_t i = 0; i < p->nchunks && p->unmapped; i++) {
		struct ctp_proc_chunk *c = &p->chunks[i];
		struct station_check sc = {.h = header(p), .ref = &c->ref};
		if (!c->window.view.base && !c->unsound)
			open_chunk(p, c->off, &c->window, &c->unsound, station_check, &sc,
				   "station chunk");
	}
	for (size_t i = 0; i < p->nmod_chunks && p->unmapped; i++) {
		struct ctp_proc_mod_chunk *m = &p->mod_chunks[i];
		if (!m->window.view.base && !m->unsound)
			open_chunk(p, m->off, &m->window, &m->unsound, NULL, NULL, "module chunk");
	}
}

void ctp_proc_follow_growth(struct ctp_proc *p)
{
	if (!p->view.base)
		return;
	uint64_t head = CTP_LOAD_ACQUIRE(&header(p)->blocks_head);
	if (head != p->walked_head) {
		size_t chunks = p->nchunks, mods = p->nmod_chunks;
		ctp_file_blocks(p->memfd, head, p->walked_head, note_block, p);
		p->walked_head = head;
		ctp_blocks_oldest_first(p->chunks, chunks, p->nchunks, sizeof(*p->chunks));
		ctp_blocks_oldest_first(p->mod_chunks, mods, p->nmod_chunks,
					sizeof(*p->mod_chunks));
	}
	if (p->unmapped)
		map_chunks(p);
}

/* The symbol cache's source of modules (ctp_module_source): the module chunks mapped, newest
 * first, each read again for entries added since (a dlopen). */
static void read_modules(void *ctx, struct ctp_symcache *c)
{
	struct ctp_proc *p = ctx;
	ctp_proc_follow_growth(p);
	struct ctp_module_ref refs[CTP_SYMCACHE_MODULE_CHUNKS];
	size_t n = 0;
	uint64_t total = 0;
	for (size_t i = p->nmod_chunks; i-- > 0 && n < CTP_SYMCACHE_MODULE_CHUNKS;) {
		struct ctp_proc_mod_chunk *m = &p->mod_chunks[i];
		struct ctp_block *b =
			m->window.view.base ? ctp_block_window_block(&m->window, m->off) : NULL;
		if (b && ctp_view_module_chunk(&m->window.view, b, m->off, &refs[n])) {
			total += refs[n].count;
			n++;
		}
	}
	ctp_symcache_add_modules(c, refs, n, total);
}

static void report_corrupt(struct ctp_proc *p, struct ctp_ring_state *rs, const char *what)
{
	p->c->corrupt_rings++;
	if (!p->corrupt_warned) {
		p->corrupt_warned = true;
		fprintf(stderr,
			"ctp-collector: pid %u: %s in the ring of thread %u; its unread records "
			"were skipped (further ones in this process are counted, not reported)\n",
			p->pid, what, rs->tid);
	}
	ctp_emit_loss(&p->c->em, p->pid, rs->tid, 0, "corrupt ring");
}

static struct ctp_ring_state *ring_state(struct ctp_proc *p, uint32_t index, uint32_t owner)
{
	if (index >= p->rings_cap) {
		size_t cap = p->rings_cap ? p->rings_cap : 8;
		while (cap <= index)
			cap *= 2;
		p->rings = ctp_xrealloc(p->rings, cap * sizeof(*p->rings));
		memset(p->rings + p->rings_cap, 0, (cap - p->rings_cap) * sizeof(*p->rings));
		p->rings_cap = cap;
	}
	if (index >= p->nrings)
		p->nrings = index + 1;
	struct ctp_ring_state *rs = &p->rings[index];
	if (!rs->known) {
		rs->known = true;
		rs->tid = owner;
	}
	return rs;
}

static void emit_record(void *ctx, uint32_t ring, const struct ctp_rec *rec)
{
	struct ctp_proc *p = ctx;
	struct ctp_ring_state *rs = &p->rings[ring];
	const struct ctp_reorder_note *note = (const struct ctp_reorder_note *)rec;
	if (rec->type == CTP_REORDER_LOSS) {
		ctp_emit_loss(&p->c->em, p->pid, rs->tid, note->value, NULL);
	} else if (rec->type == CTP_REORDER_CORRUPT) {
		report_corrupt(p, rs,
			       (note->value & CTP_BATCH_CORRUPT)
				       ? "impossible head, tail or record size"
				       : "a record shorter than its contents");
	} else {
		struct ctp_visit_ctx vc = {.p = p, .rs = rs};
		ctp_records_visit(&vc, rec, rec->size);
		if (vc.malformed)
			report_corrupt(p, rs, "a record shorter than its contents");
	}
}

/* Queues a record to be let out in time order with the other rings' (collector/reorder.h).
 * Where there is no memory for the queue to grow (an address-space limit, ulimit -v), what it
 * holds goes out at once and the record after it: records of different rings may then come out
 * of time order, and none is lost. (The collector used to abort, out of memory.) */
static void queue_record(struct ctp_proc *p, uint32_t ring, const struct ctp_rec *rec)
{
	if (ctp_reorder_push(&p->order, ring, rec))
		return;
	if (!p->order_flushed) {
		p->order_flushed = true;
		fprintf(stderr,
			"ctp-collector: pid %u: out of memory to put records in time order; those "
			"held are written now, and lines of different threads may be out of "
			"order\n",
			p->pid);
	}
	ctp_proc_release_until(p, UINT64_MAX);
	if (!ctp_reorder_push(&p->order, ring, rec))
		emit_record(p, ring, rec);
}

static void queue_note(struct ctp_proc *p, uint32_t ring, uint8_t type, uint64_t value)
{
	struct ctp_reorder_note note = ctp_reorder_note(type, value);
	queue_record(p, ring, &note.h);
}

/* One batch: its records in order, then what went wrong in the ring, then its loss. */
static void queue_batch(struct ctp_proc *p, const struct ctp_spool_batch *b)
{
	ring_state(p, b->ring, b->owner);
	const uint8_t *data = (const uint8_t *)(b + 1);
	/* The harvester wrote whole records of checked sizes: at least 8, multiples of 8. */
	for (uint32_t pos = 0; pos + sizeof(struct ctp_rec) <= b->bytes;) {
		const struct ctp_rec *rec = (const struct ctp_rec *)(data + pos);
		ctp_deferred_note_queued(p, rec);
		queue_record(p, b->ring, rec);
		pos += rec->size;
	}
	if (b->flags)
		queue_note(p, b->ring, CTP_REORDER_CORRUPT, b->flags);
	if (b->lost)
		queue_note(p, b->ring, CTP_REORDER_LOSS, b->lost);
}

/* Records are held back at most this long for a quiet thread's ring to catch up. */
#define REORDER_LAG_NS 100000000ull
/* ...and at least this long behind the last pass's mark, for a record in flight: stamped, then
 * its thread preempted before it published it. Such a thread waits for the other runnable
 * threads' time slices, a few milliseconds: with the next-to-last mark alone, which is only
 * microseconds old when passes follow one another closely (every ring behind), flat-out 2- and
 * 4-thread programs on 2 CPUs had 9-17 lines in 15-18 M out of order, by 0.8-4.2 ms. */
#define REORDER_FLIGHT_NS 10000000ull

/* `ns` in the process's clock's units. */
static uint64_t clock_span(const struct ctp_proc *p, uint64_t ns)
{
	if (p->clock_kind == CTP_CLOCK_TSC && p->c->have_tsc)
		return (uint64_t)((double)ns / ctp_collector_tsc(p->c)->ns_per_tick);
	return ns;
}

/* Lets out what no ring can still precede (collector/reorder.h): what was stamped before the
 * next-to-last harvest pass's mark (the pass after it took any record that was in flight then)
 * and the flight time before the last one, or, when the harvester has been idle, before a
 * moment the lag in the past. Not the latter while a ring or the spool still holds records (a
 * pass was cut short by its budget, or the converter is behind): older records of another ring
 * may wait there. A program traced from its start by LD_PRELOAD runs before its collector
 * attaches, and its rings then hold records far older than the lag. */
void ctp_proc_release_ordered(struct ctp_proc *p)
{
	uint64_t until = p->pass_before;
	uint64_t flight = clock_span(p, REORDER_FLIGHT_NS);
	uint64_t settled = p->pass_last > flight ? p->pass_last - flight : 0;
	if (settled < until)
		until = settled;
	size_t spooled;
	if (__atomic_load_n(&p->hv.cut_short, __ATOMIC_ACQUIRE) ||
	    ctp_spool_peek(&p->hv.spool, &spooled)) {
		ctp_reorder_release(&p->order, until, emit_record, p);
		return;
	}
	uint64_t now =
		p->clock_kind == CTP_CLOCK_TSC && p->c->have_tsc ? ctp_tsc() : ctp_monotonic_ns();
	uint64_t lag = clock_span(p, REORDER_LAG_NS);
	if (now > lag && now - lag > until)
		until = now - lag;
	ctp_proc_release_until(p, until);
}

void ctp_proc_release_until(struct ctp_proc *p, uint64_t until)
{
	ctp_reorder_release(&p->order, until, emit_record, p);
}

uint64_t ctp_proc_convert(struct ctp_proc *p, uint64_t max_bytes)
{
	uint64_t total = 0;
	bool followed = false;
	while (max_bytes == 0 || total < max_bytes) {
		size_t n;
		const uint8_t *d = ctp_spool_peek(&p->hv.spool, &n);
		if (!d)
			break;
		if (!followed) {
			ctp_proc_follow_growth(p);
			followed = true;
		}
		size_t used = 0;
		while (used + sizeof(struct ctp_spool_batch) <= n) {
			const struct ctp_spool_batch *b =
				(const struct ctp_spool_batch *)(d + used);
			if (b->ring == CTP_SPOOL_PASS) {
				p->pass_before = p->pass_last;
				p->pass_last = b->complete_before;
			} else {
				queue_batch(p, b);
			}
			used += sizeof(*b) + b->bytes;
			if (max_bytes && total + used >= max_bytes)
				break;
		}
		ctp_spool_consumed(&p->hv.spool, used);
		total += used;
		/* What each piece of the spool completes goes out before the next is queued: a
		 * whole spool converted at once (the final drain, a snapshot, after a hold) would
		 * otherwise be copied into the reorder queue entire, all of it held at once. */
		ctp_proc_release_ordered(p);
	}
	if (total == 0)
		ctp_proc_release_ordered(p); /* a quiet process's records wait only so long */
	return total;
}

void ctp_proc_drain(struct ctp_proc *p)
{
	ctp_proc_follow_growth(p);
	ctp_proc_convert(p, 0);
	for (int pass = 0; pass < DRAIN_PASSES; pass++) {
		uint64_t got = ctp_harvest_rings(&p->hv, DRAIN_TURN, NULL);
		ctp_proc_convert(p, 0);
		if (got == 0)
			break;
	}
	/* Nothing more can come: everything out, in order. */
	ctp_proc_release_until(p, UINT64_MAX);
	uint32_t rings_unread = p->hv.unmapped;
	/* The final states come from every station chunk there is; the harvester's mappings are
	 * no longer needed, and their room may let the last chunks be mapped. */
	ctp_harvest_unmap(&p->hv);
	ctp_proc_follow_growth(p);
	if (rings_unread)
		fprintf(stderr,
			"ctp-collector: pid %u: %u ring%s could never be mapped: the records in "
			"%s are missing and not counted as lost\n",
			p->pid, rings_unread, rings_unread == 1 ? "" : "s",
			rings_unread == 1 ? "it" : "them");
	if (p->unmapped)
		fprintf(stderr,
			"ctp-collector: pid %u: %u station or module chunk%s could never be "
			"mapped: the final states of the coroutines in %s, or the names of the "
			"modules, are missing\n",
			p->pid, p->unmapped, p->unmapped == 1 ? "" : "s",
			p->unmapped == 1 ? "it" : "them");
}

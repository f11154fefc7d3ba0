#include "collector/spool.h"
#include "ctp/populate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct ctp_spool_chunk {
	struct ctp_spool_chunk *next; /* newer chunk; under the lock */
	size_t cap;
	size_t committed; /* bytes the reader may read; under the lock */
	size_t read;	  /* reader only */
	uint8_t data[];
};

/* The pool holds up to twice its target: chunks the reader frees in a burst are kept. */
#define POOL_MAX_TARGET 64  /* chunks: 16 MiB */
#define POOL_FIRST_TARGET 4 /* chunks: 1 MiB, once the harvester has needed a chunk */

static uint64_t in_spools(struct ctp_spool_budget *b)
{
	return __atomic_load_n(&b->used, __ATOMIC_SEQ_CST) -
	       __atomic_load_n(&b->pooled, __ATOMIC_SEQ_CST);
}

static void note_peak(struct ctp_spool_budget *b)
{
	uint64_t now = in_spools(b);
	uint64_t peak = __atomic_load_n(&b->peak, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(&b->peak, &peak, now, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Chunks are mapped with their pages populated in one call: on the VMs we measured, a page
 * faulted in one at a time costs about 13 us, one populated with the mapping 0.6 us, and a
 * 256 KiB chunk has 64 of them. (malloc would also hand chunks of this size back to the kernel
 * at each free, to fault them in again at the next.) */
static size_t chunk_bytes(size_t cap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	return (sizeof(struct ctp_spool_chunk) + cap + page - 1) / page * page;
}

/* NULL when memory ran out. */
static struct ctp_spool_chunk *chunk_try_new(size_t cap)
{
	struct ctp_spool_chunk *c = ctp_map_populated(chunk_bytes(cap));
	if (!c)
		return NULL;
	c->cap = cap;
	return c;
}

static void chunk_free(struct ctp_spool_chunk *c)
{
	munmap(c, chunk_bytes(c->cap));
}

/* Memory ran out below the limit (an address-space limit whose room the symbolizer's maps
 * took): the spools hold no more than they hold now, and the harvester, finding the budget
 * spent, leaves records in the rings (dropped there and counted) rather than the collector
 * dying with the trace. Said once. */
static void shrink_to_used(struct ctp_spool_budget *b)
{
	uint64_t used = __atomic_load_n(&b->used, __ATOMIC_SEQ_CST);
	if (used >= __atomic_load_n(&b->limit, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&b->limit, used, __ATOMIC_SEQ_CST);
	fprintf(stderr,
		"ctp-collector: out of memory at %.1f MiB of spool: it holds no more from now on, "
		"and records beyond it are dropped and counted\n",
		(double)used / (1 << 20));
}

static struct ctp_spool_chunk *take_chunk(struct ctp_spool_budget *b, size_t cap)
{
	struct ctp_spool_chunk *c = NULL;
	if (cap == CTP_SPOOL_CHUNK) {
		pthread_mutex_lock(&b->pool_lock);
		c = b->pool;
		if (c) {
			b->pool = c->next;
			__atomic_sub_fetch(&b->pooled, c->cap, __ATOMIC_SEQ_CST);
		}
		pthread_mutex_unlock(&b->pool_lock);
	}
	if (!c) {
		if (cap == CTP_SPOOL_CHUNK)
			__atomic_store_n(&b->pool_ran_dry, 1, __ATOMIC_RELAXED);
		c = chunk_try_new(cap);
		if (!c) {
			shrink_to_used(b);
			return NULL;
		}
		__atomic_add_fetch(&b->used, cap, __ATOMIC_SEQ_CST);
	}
	note_peak(b);
	c->next = NULL;
	c->committed = c->read = 0;
	return c;
}

static void release(struct ctp_spool_budget *b, struct ctp_spool_chunk *c)
{
	if (c->cap == CTP_SPOOL_CHUNK) {
		pthread_mutex_lock(&b->pool_lock);
		/* A freed chunk is touched memory already: kept even before any stocking. */
		size_t target =
			b->pool_target > POOL_FIRST_TARGET ? b->pool_target : POOL_FIRST_TARGET;
		bool keep = __atomic_load_n(&b->pooled, __ATOMIC_SEQ_CST) <
			    2 * target * CTP_SPOOL_CHUNK;
		if (keep) {
			c->next = b->pool;
			b->pool = c;
			__atomic_add_fetch(&b->pooled, c->cap, __ATOMIC_SEQ_CST);
		}
		pthread_mutex_unlock(&b->pool_lock);
		if (keep)
			return;
	}
	__atomic_sub_fetch(&b->used, c->cap, __ATOMIC_SEQ_CST);
	chunk_free(c);
}

void ctp_spool_budget_init(struct ctp_spool_budget *b, uint64_t limit)
{
	b->limit = limit;
	b->used = b->pooled = b->pending = b->peak = 0;
	b->pool_target_max = limit / 4 / CTP_SPOOL_CHUNK;
	if (b->pool_target_max > POOL_MAX_TARGET)
		b->pool_target_max = POOL_MAX_TARGET;
	b->pool_target = 0;
	b->pool_ran_dry = 0;
	pthread_mutex_init(&b->pool_lock, NULL);
	b->pool = NULL;
}

void ctp_spool_budget_fini(struct ctp_spool_budget *b)
{
	while (b->pool) {
		struct ctp_spool_chunk *c = b->pool;
		b->pool = c->next;
		b->used -= c->cap;
		b->pooled -= c->cap;
		chunk_free(c);
	}
	pthread_mutex_destroy(&b->pool_lock);
}

void ctp_spool_budget_stock(struct ctp_spool_budget *b)
{
	ctp_spool_budget_stock_some(b, SIZE_MAX);
}

void ctp_spool_budget_stock_some(struct ctp_spool_budget *b, size_t max_chunks)
{
	if (__atomic_exchange_n(&b->pool_ran_dry, 0, __ATOMIC_RELAXED)) {
		size_t target = b->pool_target ? 2 * b->pool_target : POOL_FIRST_TARGET;
		b->pool_target = target < b->pool_target_max ? target : b->pool_target_max;
	}
	for (size_t made = 0;
	     made < max_chunks &&
	     __atomic_load_n(&b->pooled, __ATOMIC_SEQ_CST) < b->pool_target * CTP_SPOOL_CHUNK &&
	     __atomic_load_n(&b->used, __ATOMIC_SEQ_CST) + CTP_SPOOL_CHUNK <=
		     __atomic_load_n(&b->limit, __ATOMIC_SEQ_CST);
	     made++) {
		struct ctp_spool_chunk *c = chunk_try_new(CTP_SPOOL_CHUNK); /* populated */
		if (!c) {
			shrink_to_used(b);
			break;
		}
		__atomic_add_fetch(&b->used, c->cap, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&b->pool_lock);
		c->next = b->pool;
		b->pool = c;
		__atomic_add_fetch(&b->pooled, c->cap, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&b->pool_lock);
	}
}

uint64_t ctp_spool_budget_room(struct ctp_spool_budget *b)
{
	uint64_t held = in_spools(b);
	uint64_t limit = __atomic_load_n(&b->limit, __ATOMIC_SEQ_CST);
	return held < limit ? limit - held : 0;
}

void ctp_spool_init(struct ctp_spool *s, struct ctp_spool_budget *b)
{
	pthread_mutex_init(&s->lock, NULL);
	s->head = s->tail = NULL;
	s->budget = b;
	s->wpos = 0;
}

void ctp_spool_free(struct ctp_spool *s)
{
	struct ctp_spool_chunk *c = s->head;
	while (c) {
		struct ctp_spool_chunk *next = c->next;
		__atomic_sub_fetch(&s->budget->pending, c->committed - c->read, __ATOMIC_SEQ_CST);
		release(s->budget, c);
		c = next;
	}
	s->head = s->tail = NULL;
	pthread_mutex_destroy(&s->lock);
}

uint8_t *ctp_spool_write_room(struct ctp_spool *s, size_t min, size_t *room)
{
	struct ctp_spool_chunk *t = s->tail;
	if (t && t->cap - s->wpos >= min) {
		*room = t->cap - s->wpos;
		return t->data + s->wpos;
	}
	size_t cap = min > CTP_SPOOL_CHUNK ? min : CTP_SPOOL_CHUNK;
	struct ctp_spool_chunk *c = take_chunk(s->budget, cap);
	if (!c)
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	pthread_mutex_unlock(&s->lock);
	s->wpos = 0;
	*room = cap;
	return c->data;
}

void ctp_spool_commit(struct ctp_spool *s, size_t n)
{
	if (n == 0)
		return;
	s->wpos += n;
	pthread_mutex_lock(&s->lock);
	s->tail->committed = s->wpos;
	pthread_mutex_unlock(&s->lock);
	/* After the bytes are visible: a reader that sees pending > 0 finds them. */
	__atomic_add_fetch(&s->budget->pending, n, __ATOMIC_SEQ_CST);
}

void ctp_spool_trim(struct ctp_spool *s)
{
	struct ctp_spool_chunk *gone = NULL;
	pthread_mutex_lock(&s->lock);
	struct ctp_spool_chunk *t = s->tail;
	if (t && s->head == t && t->read == t->committed && t->committed == s->wpos) {
		gone = t;
		s->head = s->tail = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	if (gone) {
		s->wpos = 0;
		release(s->budget, gone);
	}
}

const uint8_t *ctp_spool_peek(struct ctp_spool *s, size_t *n)
{
	const uint8_t *p = NULL;
	*n = 0;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct ctp_spool_chunk *h = s->head;
		if (!h)
			break;
		if (h->read < h->committed) {
			p = h->data + h->read;
			*n = h->committed - h->read;
			break;
		}
		/* Read to its end and no longer the writer's: free it and look at the next. */
		if (h == s->tail)
			break;
		s->head = h->next;
		pthread_mutex_unlock(&s->lock);
		release(s->budget, h);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return p;
}

void ctp_spool_consumed(struct ctp_spool *s, size_t n)
{
	if (n == 0)
		return;
	struct ctp_spool_chunk *gone = NULL;
	pthread_mutex_lock(&s->lock);
	struct ctp_spool_chunk *h = s->head;
	h->read += n;
	if (h->read == h->committed && h != s->tail) {
		/* The writer has moved on to a newer chunk: this one is done. */
		gone = h;
		s->head = h->next;
	}
	pthread_mutex_unlock(&s->lock);
	__atomic_sub_fetch(&s->budget->pending, n, __ATOMIC_SEQ_CST);
	if (gone)
		release(s->budget, gone);
}

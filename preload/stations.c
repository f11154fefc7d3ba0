/* Station allocation. Indices come from a free list of ended coroutines' stations, else from
 * the header's high-water mark; a chunk of stations is allocated when an index falls past the
 * last one. The preload finds a station by index through a private directory of chunks. */
#include <string.h>
#include <sys/mman.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/segment.h"
#include "preload/stations.h"

enum { CHUNK_SHIFT = CTP_STATION_CHUNK_SHIFT, PER_CHUNK = 1 << CHUNK_SHIFT };

struct ctp_station_dir ctp_station_dir;
#define dir ctp_station_dir

void ctp_stations_init(void)
{
	dir.station_size = ctp_seg.hdr->station_size;
	ctp_seg.hdr->stations_per_chunk = PER_CHUNK;
}

struct chunk_fill {
	uint32_t first;
	uint32_t count;
	uint64_t stations_off;
};

static void fill_chunk(void *block, uint64_t off, void *arg)
{
	struct ctp_station_chunk *c = block;
	struct chunk_fill *f = arg;
	c->first = f->first;
	c->count = f->count;
	_Static_assert(sizeof(*c) <= CTP_CACHE_LINE, "stations start on the next line");
	c->stations_off = off + CTP_CACHE_LINE;
	f->stations_off = c->stations_off;
}

/* The private data of chunk n, made if need be. Published before the chunk itself: a thread
 * that finds a station in a chunk finds its private data too. */
static bool ensure_private(uint32_t n)
{
	if (CTP_LOAD_ACQUIRE(&dir.priv[n]))
		return true;
	size_t bytes = (size_t)PER_CHUNK * sizeof(struct ctp_coro_private);
	void *priv = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (priv == MAP_FAILED)
		return false;
	struct ctp_coro_private *expected = NULL;
	if (!__atomic_compare_exchange_n(&dir.priv[n], &expected, priv, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE))
		munmap(priv, bytes);
	return true;
}

static bool ensure_chunk(uint32_t n)
{
	if (CTP_LOAD_ACQUIRE(&dir.chunk[n]))
		return true;
	if (!ensure_private(n))
		return false;
	uint32_t count = PER_CHUNK;
	uint32_t size = ctp_seg.hdr->station_size;
	struct chunk_fill f = {.first = n * count, .count = count};
	uint64_t off = ctp_segment_alloc_block(CTP_BLOCK_STATIONS,
					       sizeof(struct ctp_station_chunk) + CTP_CACHE_LINE +
						       (uint64_t)count * size,
					       fill_chunk, &f);
	if (!off)
		return false;
	/* Two threads may race to make the same chunk: the loser's block stays in the list with
	 * all stations free, which the collector reads as nothing. */
	uint8_t *expected = NULL;
	__atomic_compare_exchange_n(&dir.chunk[n], &expected, ctp_segment_ptr(f.stations_off),
				    false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE);
	return true;
}

struct ctp_coro_private *ctp_station_private(uint32_t idx)
{
	struct ctp_coro_private *p = CTP_LOAD_ACQUIRE(&dir.priv[idx >> CHUNK_SHIFT]);
	return p ? &p[idx & (PER_CHUNK - 1)] : NULL;
}

static uint32_t pop_free(void)
{
	uint64_t head = CTP_LOAD_ACQUIRE(&dir.free_head);
	for (;;) {
		uint32_t top = (uint32_t)head;
		if (top == 0)
			return CTP_NO_STATION;
		uint32_t next = CTP_LOAD_RELAXED(&ctp_station_at(top - 1)->free_next);
		uint64_t replacement = ((head >> 32) + 1) << 32 | next;
		if (__atomic_compare_exchange_n(&dir.free_head, &head, replacement, true,
						__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			return top - 1;
	}
}

uint32_t ctp_station_alloc(void)
{
	uint32_t idx = pop_free();
	if (idx != CTP_NO_STATION)
		return idx;
	idx = __atomic_fetch_add(&ctp_seg.hdr->station_count, 1, __ATOMIC_RELAXED);
	if ((idx >> CHUNK_SHIFT) >= CTP_STATION_MAX_CHUNKS || !ensure_chunk(idx >> CHUNK_SHIFT)) {
		__atomic_fetch_add(&ctp_seg.hdr->stations_lost, 1, __ATOMIC_RELAXED);
		return CTP_NO_STATION;
	}
	return idx;
}

void ctp_station_free(uint32_t idx)
{
	struct ctp_station *s = ctp_station_at(idx);
	uint64_t head = CTP_LOAD_RELAXED(&dir.free_head);
	do {
		CTP_STORE_RELAXED(&s->free_next, (uint32_t)head);
	} while (!__atomic_compare_exchange_n(&dir.free_head, &head,
					      ((head >> 32) + 1) << 32 | (idx + 1), true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void ctp_stations_each(void (*fn)(uint32_t idx, struct ctp_station *s, void *arg), void *arg)
{
	uint32_t n = CTP_LOAD_RELAXED(&ctp_seg.hdr->station_count);
	for (uint32_t i = 0; i < n; i++)
		if (CTP_LOAD_ACQUIRE(&dir.chunk[i >> CHUNK_SHIFT]))
			fn(i, ctp_station_at(i), arg);
}

static void close_torn_write(uint32_t idx, struct ctp_station *s, void *arg)
{
	(void)idx;
	(void)arg;
	uint32_t seq = CTP_LOAD_RELAXED(&s->seq);
	if (seq & 1)
		CTP_STORE_RELEASE(&s->seq, seq + 1);
}

void ctp_stations_fork_child(void)
{
	/* A thread that was writing a station when another forked does not exist in the child:
	 * its seqlock would stay odd for ever, and the collector never read that station. The
	 * station keeps what was written; its state is the thread's, which the child ends. */
	ctp_stations_each(close_torn_write, NULL);
}

/* The collector's view of a segment: every offset, size and count in the segment is written by
 * the traced process, so each must be checked against the mapping before it is used. These
 * tests build a segment in memory and break it one field at a time; under ASan any read outside
 * the mapping is an error even where the view returned something. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ctp/segment_view.h"

enum { SEG_SIZE = 64 * 1024, DEPTH = 16 };

static _Alignas(CTP_CACHE_LINE) uint8_t seg[SEG_SIZE];
static struct ctp_segment_view view = {seg, SEG_SIZE, 0};

static struct ctp_header *hdr(void)
{
	return (struct ctp_header *)seg;
}

/* A valid, empty segment. */
static int fresh_segment(void **state)
{
	(void)state;
	memset(seg, 0, sizeof(seg));
	struct ctp_header *h = hdr();
	h->magic = CTP_MAGIC;
	h->version = CTP_VERSION;
	h->header_size = sizeof(*h);
	h->pid = 1234;
	h->clock_kind = CTP_CLOCK_MONOTONIC_NS;
	h->segment_size = SEG_SIZE;
	h->segment_max = SEG_SIZE;
	h->stack_depth = DEPTH;
	h->station_size = ctp_station_size(DEPTH);
	h->stations_per_chunk = 8;
	view.base = seg;
	view.size = SEG_SIZE;
	return 0;
}

/* Pushes a block of `kind` and `size` at `off` the way the producer does. */
static struct ctp_block *push_block(uint64_t off, uint32_t kind, uint64_t size)
{
	struct ctp_block *b = (struct ctp_block *)(seg + off);
	b->kind = kind;
	b->size = size;
	b->next = hdr()->blocks_head;
	hdr()->blocks_head = off;
	return b;
}

/* ---- header ---- */

static void expect_refused(const char *what, const char *reason_part)
{
	char why[128] = "";
	if (ctp_view_check_header(&view, why, sizeof(why)))
		fail_msg("%s: header accepted", what);
	if (!strstr(why, reason_part))
		fail_msg("%s: reason \"%s\" does not mention \"%s\"", what, why, reason_part);
}

static void header_checks_give_a_reason(void **state)
{
	(void)state;
	char why[128] = "";
	assert_true(ctp_view_check_header(&view, why, sizeof(why)));

	view.size = sizeof(struct ctp_header) - 1;
	expect_refused("short mapping", "smaller than its header");
	view.size = SEG_SIZE;

	hdr()->magic = CTP_MAGIC ^ 1;
	expect_refused("bad magic", "magic");
	hdr()->magic = CTP_MAGIC;

	hdr()->version = 1;
	expect_refused("cTP v1", "version 1");
	hdr()->version = CTP_VERSION;

	hdr()->header_size = 128;
	expect_refused("header size", "header size 128");
	hdr()->header_size = sizeof(struct ctp_header);

	hdr()->stack_depth = CTP_MAX_STACK_DEPTH + 1;
	hdr()->station_size = ctp_station_size(CTP_MAX_STACK_DEPTH + 1);
	expect_refused("stack depth over the maximum", "stack depth 65");
	hdr()->stack_depth = DEPTH;
	hdr()->station_size = ctp_station_size(DEPTH) - CTP_CACHE_LINE;
	expect_refused("stations too small for their frames", "station size");
	hdr()->station_size = ctp_station_size(DEPTH);

	hdr()->clock_kind = 0;
	expect_refused("no clock", "clock");
	hdr()->clock_kind = 3;
	expect_refused("unknown clock", "clock");
	hdr()->clock_kind = CTP_CLOCK_TSC;
	assert_true(ctp_view_check_header(&view, why, sizeof(why)));

	/* A short reason buffer is cut, never overrun (ASan watches the bytes after it). */
	hdr()->magic = 0;
	char small[9];
	assert_false(ctp_view_check_header(&view, small, sizeof(small)));
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void view_at_is_overflow_safe(void **state)
{
	(void)state;
	assert_ptr_equal(ctp_view_at(&view, 0, SEG_SIZE), seg);
	assert_ptr_equal(ctp_view_at(&view, SEG_SIZE - 1, 1), seg + SEG_SIZE - 1);
	assert_ptr_equal(ctp_view_at(&view, SEG_SIZE, 0), seg + SEG_SIZE);
	assert_null(ctp_view_at(&view, 0, SEG_SIZE + 1));
	assert_null(ctp_view_at(&view, SEG_SIZE, 1));
	assert_null(ctp_view_at(&view, SEG_SIZE + 1, 0));
	assert_null(ctp_view_at(&view, 8, UINT64_MAX));
	assert_null(ctp_view_at(&view, 8, UINT64_MAX - 7));
	assert_null(ctp_view_at(&view, UINT64_MAX, 0));
	assert_null(ctp_view_at(&view, UINT64_MAX, 1));
	assert_null(ctp_view_at(&view, UINT64_MAX - 7, 16)); /* off + len wraps to 8 */
	assert_null(ctp_view_at(&view, 1ull << 63, 1ull << 63));
}

/* ---- the block list ---- */

struct visits {
	uint64_t n;
	uint64_t off[8];
};

static void record_visit(void *ctx, struct ctp_block *b, uint64_t off)
{
	struct visits *v = ctx;
	assert_ptr_equal(b, seg + off);
	if (v->n < 8)
		v->off[v->n] = off;
	v->n++;
}

static void blocks_are_walked_newest_first(void **state)
{
	(void)state;
	push_block(256, CTP_BLOCK_STATIONS, 1024);
	push_block(1280, CTP_BLOCK_RING, 4096);
	push_block(5376, CTP_BLOCK_MODULES, SEG_SIZE - 5376); /* up to the very end */
	struct visits v = {0};
	assert_int_equal(ctp_view_blocks(&view, record_visit, &v), 3);
	assert_int_equal(v.n, 3);
	assert_int_equal(v.off[0], 5376);
	assert_int_equal(v.off[1], 1280);
	assert_int_equal(v.off[2], 256);
}

static void block_cycles_terminate(void **state)
{
	(void)state;
	struct visits v = {0};
	struct ctp_block *a = push_block(256, CTP_BLOCK_RING, 64);
	a->next = 256; /* a block that is its own successor */
	uint64_t n = ctp_view_blocks(&view, record_visit, &v);
	assert_true(n >= 1 && n <= SEG_SIZE / sizeof(struct ctp_block));

	fresh_segment(NULL);
	memset(&v, 0, sizeof(v));
	a = push_block(256, CTP_BLOCK_RING, 64);
	push_block(1024, CTP_BLOCK_STATIONS, 64);
	a->next = 1024; /* 1024 -> 256 -> 1024 -> ... */
	n = ctp_view_blocks(&view, record_visit, &v);
	assert_true(n >= 2 && n <= SEG_SIZE / sizeof(struct ctp_block));
	assert_int_equal(v.off[0], 1024);
	assert_int_equal(v.off[1], 256);
}

static void block_walk_stops_at_bad_blocks(void **state)
{
	(void)state;
	struct visits v;
	struct ctp_block *b;
	const struct {
		const char *what;
		uint64_t next;	/* of the one good block at 256 */
		uint64_t bsize; /* of the bad block at `next`, if it is inside */
		uint64_t expect;
	} cases[] = {
		{"next past the mapping", SEG_SIZE, 64, 1},
		{"next near 2^64", UINT64_MAX - 7, 64, 1},
		{"next with its header cut by the end", SEG_SIZE - 16, 0, 1},
		{"next misaligned", 1028, 64, 1},
		{"block smaller than its header", 1024, 16, 1},
		{"block size 0", 1024, 0, 1},
		{"block running past the mapping", 1024, SEG_SIZE - 1024 + 8, 1},
		{"block size near 2^64", 1024, UINT64_MAX - 512, 1},
		{"a good second block", 1024, 64, 2},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fresh_segment(NULL);
		b = push_block(256, CTP_BLOCK_RING, 64);
		b->next = cases[i].next;
		/* Write the second block where it is inside and aligned (else it is never read). */
		if (cases[i].next <= SEG_SIZE - sizeof(struct ctp_block) &&
		    cases[i].next % 8 == 0) {
			struct ctp_block *bad = (struct ctp_block *)(seg + cases[i].next);
			bad->kind = CTP_BLOCK_RING;
			bad->size = cases[i].bsize;
			bad->next = 0;
		}
		memset(&v, 0, sizeof(v));
		uint64_t n = ctp_view_blocks(&view, record_visit, &v);
		if (n != cases[i].expect)
			fail_msg("%s: %llu blocks visited, expected %llu", cases[i].what,
				 (unsigned long long)n, (unsigned long long)cases[i].expect);
	}

	fresh_segment(NULL);
	hdr()->blocks_head = SEG_SIZE + 64;
	memset(&v, 0, sizeof(v));
	assert_int_equal(ctp_view_blocks(&view, record_visit, &v), 0);
}

/* ---- rings ---- */

static struct ctp_ring *put_ring(uint64_t off, uint64_t capacity, uint64_t data_off)
{
	struct ctp_ring *r =
		(struct ctp_ring *)push_block(off, CTP_BLOCK_RING, sizeof(struct ctp_ring));
	r->capacity = capacity;
	r->data_off = data_off;
	return r;
}

static void good_ring_is_accepted(void **state)
{
	(void)state;
	struct ctp_ring *r = put_ring(256, 4096, 256 + sizeof(struct ctp_ring));
	r->block.size = sizeof(*r) + 4096;
	struct ctp_ring_ref ref;
	assert_true(ctp_view_ring(&view, &r->block, 256, &ref));
	assert_ptr_equal(ref.ring, r);
	assert_ptr_equal(ref.data, seg + 256 + sizeof(*r));
	assert_int_equal(ref.capacity, 4096);

	/* Data running exactly to the end of the mapping is fine. */
	r->capacity = 1024;
	r->data_off = SEG_SIZE - 1024;
	assert_true(ctp_view_ring(&view, &r->block, 256, &ref));
}

static void bad_rings_are_refused(void **state)
{
	(void)state;
	const struct {
		const char *what;
		uint64_t off, capacity, data_off;
		uint32_t kind;
	} cases[] = {
		{"not a ring", 256, 4096, 1024, CTP_BLOCK_STATIONS},
		{"ring header cut by the end", SEG_SIZE - 128, 64, 1024, CTP_BLOCK_RING},
		{"capacity 0", 256, 0, 1024, CTP_BLOCK_RING},
		{"capacity not a power of two", 256, 96, 1024, CTP_BLOCK_RING},
		{"capacity under 64", 256, 32, 1024, CTP_BLOCK_RING},
		{"capacity 2^63", 256, 1ull << 63, 1024, CTP_BLOCK_RING},
		{"data misaligned", 256, 1024, 1028, CTP_BLOCK_RING},
		{"data past the end", 256, 1024, SEG_SIZE - 512, CTP_BLOCK_RING},
		{"data wholly outside", 256, 1024, SEG_SIZE, CTP_BLOCK_RING},
		{"data offset near 2^64", 256, 1024, UINT64_MAX - 1023, CTP_BLOCK_RING},
		{"data off + capacity wraps to 0", 256, 1ull << 12, (uint64_t)0 - (1ull << 12),
		 CTP_BLOCK_RING},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fresh_segment(NULL);
		/* The header of a ring cut by the end of the mapping is only partly written. */
		struct ctp_block *b = (struct ctp_block *)(seg + cases[i].off);
		if (cases[i].off + sizeof(struct ctp_ring) <= SEG_SIZE) {
			struct ctp_ring *r =
				put_ring(cases[i].off, cases[i].capacity, cases[i].data_off);
			r->block.kind = cases[i].kind;
		} else {
			b->kind = cases[i].kind;
			b->size = 64;
		}
		struct ctp_ring_ref ref;
		if (ctp_view_ring(&view, b, cases[i].off, &ref))
			fail_msg("%s: ring accepted", cases[i].what);
	}
}

/* ---- station chunks ---- */

static struct ctp_station_chunk *put_chunk(uint64_t off, uint32_t first, uint32_t count,
					   uint64_t stations_off)
{
	struct ctp_station_chunk *c = (struct ctp_station_chunk *)push_block(
		off, CTP_BLOCK_STATIONS, sizeof(struct ctp_station_chunk));
	c->first = first;
	c->count = count;
	c->stations_off = stations_off;
	return c;
}

static void good_station_chunk_is_accepted(void **state)
{
	(void)state;
	uint32_t ssize = ctp_station_size(DEPTH);
	struct ctp_station_chunk *c = put_chunk(256, 8, 4, SEG_SIZE - 4 * ssize);
	struct ctp_chunk_ref ref;
	assert_true(ctp_view_station_chunk(&view, (const struct ctp_header *)seg, &c->block, 256,
					   &ref));
	assert_ptr_equal(ref.stations, seg + SEG_SIZE - 4 * ssize);
	assert_int_equal(ref.first, 8);
	assert_int_equal(ref.count, 4);
	assert_int_equal(ref.station_size, ssize);
	assert_int_equal(ref.depth, DEPTH);
	assert_ptr_equal(ctp_chunk_station(&ref, 3), seg + SEG_SIZE - ssize);
}

static void bad_station_chunks_are_refused(void **state)
{
	(void)state;
	uint32_t ssize = ctp_station_size(DEPTH);
	const struct {
		const char *what;
		uint64_t off;
		uint32_t count;
		uint64_t stations_off;
		uint32_t kind;
	} cases[] = {
		{"not a station chunk", 256, 1, 1024, CTP_BLOCK_MODULES},
		{"chunk header cut by the end", SEG_SIZE - 40, 1, 1024, CTP_BLOCK_STATIONS},
		{"stations past the end", 256, 4, SEG_SIZE - 3 * ssize, CTP_BLOCK_STATIONS},
		{"stations wholly outside", 256, 1, SEG_SIZE, CTP_BLOCK_STATIONS},
		{"stations misaligned", 256, 1, 1028, CTP_BLOCK_STATIONS},
		{"count 2^32 - 1", 256, UINT32_MAX, 1024, CTP_BLOCK_STATIONS},
		{"stations offset near 2^64", 256, 1, UINT64_MAX - 7, CTP_BLOCK_STATIONS},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fresh_segment(NULL);
		struct ctp_block *b = (struct ctp_block *)(seg + cases[i].off);
		if (cases[i].off + sizeof(struct ctp_station_chunk) <= SEG_SIZE) {
			put_chunk(cases[i].off, 0, cases[i].count, cases[i].stations_off);
			b->kind = cases[i].kind;
		} else {
			b->kind = cases[i].kind;
			b->size = 32;
		}
		struct ctp_chunk_ref ref;
		if (ctp_view_station_chunk(&view, (const struct ctp_header *)seg, b, cases[i].off,
					   &ref))
			fail_msg("%s: chunk accepted", cases[i].what);
	}

	/* The header is untrusted too, and the process can change it after it was checked. */
	fresh_segment(NULL);
	struct ctp_station_chunk *c = put_chunk(256, 0, 1, 1024);
	struct ctp_chunk_ref ref;
	hdr()->station_size = sizeof(struct ctp_station) - 8;
	assert_false(ctp_view_station_chunk(&view, (const struct ctp_header *)seg, &c->block, 256,
					    &ref));
}

/* The reader copies ref.depth frames from each station, so a chunk ref must never promise more
 * frames than a station of ref.station_size bytes holds, whatever the header says by now:
 * otherwise reading the last station of a chunk at the end of the mapping runs past it. */
static void station_chunk_depth_fits_station_size(void **state)
{
	(void)state;
	uint32_t ssize = ctp_station_size(DEPTH);
	struct ctp_station_chunk *c = put_chunk(256, 0, 2, SEG_SIZE - 2 * ssize);
	char why[128];
	assert_true(ctp_view_check_header(&view, why, sizeof(why)));
	hdr()->stack_depth = CTP_MAX_STACK_DEPTH; /* changed after the check */
	struct ctp_chunk_ref ref;
	if (ctp_view_station_chunk(&view, (const struct ctp_header *)seg, &c->block, 256, &ref) &&
	    sizeof(struct ctp_station) + 8ull * ref.depth > ref.station_size)
		fail_msg("chunk ref promises %u frames in stations of %u bytes", ref.depth,
			 ref.station_size);
}

/* ---- module chunks ---- */

static struct ctp_module_chunk *put_modules(uint64_t off, uint32_t capacity, uint32_t count)
{
	struct ctp_module_chunk *m = (struct ctp_module_chunk *)push_block(
		off, CTP_BLOCK_MODULES,
		sizeof(struct ctp_module_chunk) + (uint64_t)capacity * sizeof(struct ctp_module));
	m->capacity = capacity;
	m->count = count;
	return m;
}

static void module_count_is_clamped_to_capacity(void **state)
{
	(void)state;
	struct ctp_module_chunk *m = put_modules(256, 4, 3);
	struct ctp_module_ref ref;
	assert_true(ctp_view_module_chunk(&view, &m->block, 256, &ref));
	assert_ptr_equal(ref.modules, m->modules);
	assert_int_equal(ref.count, 3);

	m->count = 5;
	assert_true(ctp_view_module_chunk(&view, &m->block, 256, &ref));
	assert_int_equal(ref.count, 4);
	m->count = UINT32_MAX;
	assert_true(ctp_view_module_chunk(&view, &m->block, 256, &ref));
	assert_int_equal(ref.count, 4);
}

static void bad_module_chunks_are_refused(void **state)
{
	(void)state;
	uint64_t msize = sizeof(struct ctp_module);
	uint64_t hsize = sizeof(struct ctp_module_chunk);

	/* Entries running past the end: capacity 2 with room for 1. */
	uint64_t off = SEG_SIZE - hsize - msize;
	off &= ~7ull;
	struct ctp_module_chunk *m = put_modules(off, 2, 1);
	struct ctp_module_ref ref;
	assert_false(ctp_view_module_chunk(&view, &m->block, off, &ref));
	m->capacity = 1;
	assert_true(ctp_view_module_chunk(&view, &m->block, off, &ref));
	m->capacity = UINT32_MAX;
	assert_false(ctp_view_module_chunk(&view, &m->block, off, &ref));

	fresh_segment(NULL);
	m = put_modules(256, 1, 1);
	m->block.kind = CTP_BLOCK_RING;
	assert_false(ctp_view_module_chunk(&view, &m->block, 256, &ref));

	/* Chunk header cut by the end of the mapping. */
	fresh_segment(NULL);
	struct ctp_block *b = (struct ctp_block *)(seg + SEG_SIZE - 32);
	b->kind = CTP_BLOCK_MODULES;
	b->size = 32;
	assert_false(ctp_view_module_chunk(&view, b, SEG_SIZE - 32, &ref));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, fresh_segment)
	const struct CMUnitTest tests[] = {
		T(header_checks_give_a_reason),
		T(view_at_is_overflow_safe),
		T(blocks_are_walked_newest_first),
		T(block_cycles_terminate),
		T(block_walk_stops_at_bad_blocks),
		T(good_ring_is_accepted),
		T(bad_rings_are_refused),
		T(good_station_chunk_is_accepted),
		T(bad_station_chunks_are_refused),
		T(station_chunk_depth_fits_station_size),
		T(module_count_is_clamped_to_capacity),
		T(bad_module_chunks_are_refused),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}

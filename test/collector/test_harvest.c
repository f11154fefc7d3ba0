/* The harvester's passes over a process's rings (collector/harvest.c), on a segment this test
 * writes into a memfd of its own: each pass that took records ends with a mark saying before
 * when everything is in the spool. That is when the pass began if it emptied every ring; when a
 * ring's budget cut the pass short, the time of the last record it took there (the ring keeps
 * the later ones); and no mark when that record has no time. Without marks after passes cut
 * short, a ring that stays behind kept every record of the process in the converter's queue.
 * And the harvester maps each ring on its own, never the segment whole: a segment that grows by
 * 64 MiB costs it the room of its new ring alone, and a ring it cannot map leaves the others
 * harvested. Records taken when the spool had no memory left are counted as lost, not the end
 * of the collector. A ring no thread owns, read to its end, is parked: the harvester keeps its
 * header's page alone mapped until a thread claims it. */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/address_space.h"
#include "collector/harvest.h"
#include "ctp/clock.h"
#include "ctp/ring.h"

enum {
	SEG_SIZE = 256 * 1024,
	RING_OFF = 4096,
	RING_CAPACITY = 64 * 1024,
	DATA_OFF = 8192,
	BUDGET = 4096, /* bytes a ring gives per pass */
	PID = 4242,
	GROWN = 64 << 20,
};

struct fixture {
	int memfd;
	uint8_t *seg;
	struct ctp_ring_producer prod;
	uint8_t *grown; /* the whole file once a test grew it to GROWN */
	struct ctp_ring_producer new_prod;
	struct ctp_spool_budget budget;
	struct ctp_harvest h;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->memfd = memfd_create("ctp-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(f->memfd >= 0);
	assert_int_equal(ftruncate(f->memfd, SEG_SIZE), 0);
	assert_int_equal(fcntl(f->memfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	f->seg = mmap(NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	assert_true(f->seg != MAP_FAILED);
	struct ctp_header *hd = (struct ctp_header *)f->seg;
	hd->magic = CTP_MAGIC;
	hd->version = CTP_VERSION;
	hd->header_size = sizeof(*hd);
	hd->pid = PID;
	hd->clock_kind = CTP_CLOCK_MONOTONIC_NS;
	hd->segment_size = SEG_SIZE;
	hd->segment_max = SEG_SIZE;
	struct ctp_ring *ring = (struct ctp_ring *)(f->seg + RING_OFF);
	ring->block.kind = CTP_BLOCK_RING;
	ring->block.size = DATA_OFF + RING_CAPACITY - RING_OFF; /* its data inside it */
	ring->owner = PID;
	ring->capacity = RING_CAPACITY;
	ring->data_off = DATA_OFF;
	hd->blocks_head = RING_OFF;
	ctp_ring_producer_init(&f->prod, ring, f->seg + DATA_OFF);
	ctp_spool_budget_init(&f->budget, 16u << 20);
	char why[160];
	assert_true(ctp_harvest_init(&f->h, f->memfd, PID, &f->budget, why, sizeof(why)));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	ctp_harvest_fini(&f->h);
	ctp_spool_budget_fini(&f->budget);
	munmap(f->seg, SEG_SIZE);
	if (f->grown)
		munmap(f->grown, GROWN);
	close(f->memfd);
	free(f);
	return 0;
}

/* `n` switch records stamped ts, ts + 1, ..., into the ring of `prod` */
static void write_switches_to(struct ctp_ring_producer *prod, uint32_t n, uint64_t ts)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ctp_rec_switch *r = ctp_ring_reserve(prod, sizeof(*r));
		assert_non_null(r);
		*r = (struct ctp_rec_switch){.h = {.size = sizeof(*r),
						   .type = CTP_REC_SWITCH,
						   .aux = CTP_HOW_SWAPCONTEXT},
					     .ts = ts + i,
					     .from = 1,
					     .to = 2,
					     .from_station = UINT32_MAX};
		ctp_ring_commit(prod);
	}
}

static void write_switches(struct fixture *f, uint32_t n, uint64_t ts)
{
	write_switches_to(&f->prod, n, ts);
}

/* The process grows its segment to GROWN and puts a new ring of `capacity` bytes at its end, at
 * the head of the block list; f->new_prod writes into it. */
static void grow_with_a_ring(struct fixture *f, uint64_t capacity)
{
	uint64_t ring_off = GROWN - capacity - 4096, data_off = ring_off + 4096;
	assert_int_equal(ftruncate(f->memfd, GROWN), 0);
	f->grown = mmap(NULL, GROWN, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	assert_true(f->grown != MAP_FAILED);
	struct ctp_ring *ring = (struct ctp_ring *)(f->grown + ring_off);
	*ring = (struct ctp_ring){.block = {.kind = CTP_BLOCK_RING,
					    .size = data_off + capacity - ring_off,
					    .next = RING_OFF},
				  .owner = PID + 1,
				  .capacity = capacity,
				  .data_off = data_off};
	ctp_ring_producer_init(&f->new_prod, ring, f->grown + data_off);
	struct ctp_header *hd = (struct ctp_header *)f->seg;
	hd->segment_max = hd->segment_size = GROWN;
	__atomic_store_n(&hd->blocks_head, ring_off, __ATOMIC_RELEASE);
}

/* The address-space limit of `ulimit -v` with `room` bytes left, and the one before it. */
static struct rlimit limit_room(uint64_t room)
{
	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + room, .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	return was;
}

/* What one pass put in the spool: the records taken, the time of the last one, and its mark
 * (UINT64_MAX when it wrote none). The spool is emptied. */
struct pass {
	uint32_t records;
	uint64_t last_ts;
	uint64_t mark;
};

static struct pass read_pass(struct fixture *f)
{
	struct pass p = {.mark = UINT64_MAX};
	size_t n;
	const uint8_t *d;
	while ((d = ctp_spool_peek(&f->h.spool, &n))) {
		for (size_t at = 0; at < n;) {
			const struct ctp_spool_batch *b = (const struct ctp_spool_batch *)(d + at);
			at += sizeof(*b);
			if (b->ring == CTP_SPOOL_PASS) {
				assert_int_equal(p.mark, UINT64_MAX); /* one mark a pass */
				p.mark = b->complete_before;
				continue;
			}
			assert_int_equal(p.mark, UINT64_MAX); /* the mark comes last */
			for (size_t end = at + b->bytes; at < end;) {
				const struct ctp_rec_switch *r = (const void *)(d + at);
				if (r->h.type == CTP_REC_SWITCH)
					p.last_ts = r->ts;
				p.records++;
				at += r->h.size;
			}
		}
		ctp_spool_consumed(&f->h.spool, n);
	}
	return p;
}

/* A pass that empties the ring vouches for the time it began. */
static void a_whole_pass_marks_its_start(void **state)
{
	struct fixture *f = *state;
	write_switches(f, 10, 1000);
	uint64_t before = ctp_monotonic_ns();
	assert_int_equal(ctp_harvest_rings(&f->h, BUDGET, NULL),
			 10 * sizeof(struct ctp_rec_switch));
	struct pass p = read_pass(f);
	assert_int_equal(p.records, 10);
	assert_true(p.mark >= before && p.mark <= ctp_monotonic_ns());
	assert_int_equal(f->h.cut_short, 0);
}

/* A pass cut short by the budget vouches for the time of the last record it took; the next
 * ones go on from there, each with its mark, until the ring is empty. */
static void a_pass_cut_short_marks_its_last_record(void **state)
{
	struct fixture *f = *state;
	enum { RECORDS = 1000 }; /* 40 KB: passes of 4 KiB and a last one that empties it */
	write_switches(f, RECORDS, 5000);
	uint32_t taken = 0, passes = 0;
	uint64_t previous = 0;
	for (;;) {
		uint64_t got = ctp_harvest_rings(&f->h, BUDGET, NULL);
		struct pass p = read_pass(f);
		if (got == 0) {
			assert_int_equal(p.records, 0);
			assert_int_equal(p.mark, UINT64_MAX); /* nothing taken, nothing vouched */
			break;
		}
		passes++;
		taken += p.records;
		assert_int_equal(p.last_ts, 5000 + taken - 1);
		if (f->h.cut_short)
			assert_int_equal(p.mark, p.last_ts);
		else
			assert_true(p.mark > p.last_ts); /* the last pass emptied it */
		assert_true(p.mark > previous);
		previous = p.mark;
	}
	assert_int_equal(taken, RECORDS);
	uint32_t per_pass =
		(BUDGET + sizeof(struct ctp_rec_switch) - 1) / sizeof(struct ctp_rec_switch);
	assert_int_equal(passes, (RECORDS + per_pass - 1) / per_pass);
}

/* A ring cut short on a record that carries no time: the pass cannot say how far it got, and
 * writes no mark (the one after it does). */
static void a_pass_cut_on_a_timeless_record_writes_no_mark(void **state)
{
	struct fixture *f = *state;
	uint32_t per_pass = BUDGET / sizeof(struct ctp_rec_switch) + 1;
	write_switches(f, per_pass - 1, 100);
	struct ctp_rec *odd = ctp_ring_reserve(&f->prod, 16);
	assert_non_null(odd);
	*odd = (struct ctp_rec){.size = 16, .type = 0x7f}; /* a kind this collector does not know */
	ctp_ring_commit(&f->prod);
	write_switches(f, 10, 200);
	assert_true(ctp_harvest_rings(&f->h, BUDGET, NULL) >= BUDGET);
	struct pass p = read_pass(f);
	assert_int_equal(p.records, per_pass);
	assert_int_equal(p.mark, UINT64_MAX);
	assert_true(f->h.cut_short);
	ctp_harvest_rings(&f->h, BUDGET, NULL);
	p = read_pass(f);
	assert_int_equal(p.records, 10);
	assert_int_not_equal(p.mark, UINT64_MAX);
}

/* A segment grown by 64 MiB whose growth holds one new ring of 64 KiB costs the harvester that
 * ring's room alone: under a limit that leaves 1 MiB, both rings are harvested. (It used to map
 * the segment whole and again at each growth; under such a limit it lost the new ring.) */
static void a_grown_segment_costs_the_harvester_its_new_ring_alone(void **state)
{
	struct fixture *f = *state;
	write_switches(f, 10, 1000);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 10 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 10);

	grow_with_a_ring(f, RING_CAPACITY);
	write_switches(f, 10, 2000);
	write_switches_to(&f->new_prod, 7, 2100);
	struct rlimit was = limit_room(1u << 20);
	uint64_t before = ctp_mapped_bytes_now();
	uint64_t got = ctp_harvest_rings(&f->h, 0, NULL);
	uint64_t added = ctp_mapped_bytes_now() - before;
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_int_equal(got, 17 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 17);
	assert_int_equal(f->h.nrings, 2);
	assert_true(added <= RING_CAPACITY + 2 * 4096);
}

/* A new ring too big for the room left: the ring known before is still harvested, and the new
 * one once the room is there, with every record it kept meanwhile. */
static void rings_stay_harvested_while_a_new_one_cannot_be_mapped(void **state)
{
	struct fixture *f = *state;
	grow_with_a_ring(f, 4u << 20);
	write_switches(f, 10, 2000);
	write_switches_to(&f->new_prod, 5, 2100);
	struct rlimit was = limit_room(1u << 20);
	uint64_t got = ctp_harvest_rings(&f->h, 0, NULL);
	uint32_t unmapped = f->h.unmapped;
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_int_equal(unmapped, 1);
	assert_int_equal(got, 10 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 10);

	write_switches(f, 3, 3000);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 8 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 8);
	assert_int_equal(f->h.unmapped, 0);
	assert_int_equal(f->h.nrings, 2);
}

/* The loss the spool's batches carry (the spool is emptied). */
static uint64_t read_lost(struct fixture *f)
{
	uint64_t lost = 0;
	size_t n;
	const uint8_t *d;
	while ((d = ctp_spool_peek(&f->h.spool, &n))) {
		for (size_t at = 0; at < n;) {
			const struct ctp_spool_batch *b = (const struct ctp_spool_batch *)(d + at);
			if (b->ring != CTP_SPOOL_PASS)
				lost += b->lost;
			at += sizeof(*b) + b->bytes;
		}
		ctp_spool_consumed(&f->h.spool, n);
	}
	return lost;
}

/* No memory for a spool chunk (an address-space limit whose room other mappings took): the
 * records taken from the ring are counted as lost, with the ring's next batch, where the
 * collector used to abort ("out of memory for the spool") and lose the whole trace. */
static void records_without_spool_memory_are_counted_lost(void **state)
{
	struct fixture *f = *state;
	write_switches(f, 10, 1000);
	struct rlimit was = limit_room(128 * 1024); /* less than a chunk */
	uint64_t got = ctp_harvest_rings(&f->h, 0, NULL);
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_int_equal(got, 10 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 0);
	assert_int_equal(ctp_spool_budget_room(&f->budget), 0); /* it takes no more */

	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 0);
	assert_int_equal(read_lost(f), 10);
}

static struct ctp_ring *ring_of(struct fixture *f)
{
	return (struct ctp_ring *)(f->seg + RING_OFF);
}

/* A ring its thread left (owner 0) and that is read to its end gives back its window but for
 * its header's page; a thread that claims it has its records read as before. Where the window
 * cannot be mapped again yet (an address-space limit), they wait in the ring for the pass that
 * can. */
static void a_left_ring_read_to_its_end_is_parked_until_claimed(void **state)
{
	struct fixture *f = *state;
	f->h.park_after_ns = 0;
	write_switches(f, 10, 1000);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 10 * sizeof(struct ctp_rec_switch));
	assert_int_equal(read_pass(f).records, 10);
	assert_int_equal(f->h.parked, 0); /* its thread still owns it */

	__atomic_store_n(&ring_of(f)->owner, 0, __ATOMIC_RELEASE);
	uint64_t before = ctp_mapped_bytes_now();
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 0);
	assert_int_equal(f->h.parked, 1);
	assert_true(before - ctp_mapped_bytes_now() >= RING_CAPACITY);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 0);
	assert_int_equal(f->h.parked, 1);

	/* A new thread claims it and writes, with no room for its window. */
	__atomic_store_n(&ring_of(f)->owner, PID + 5, __ATOMIC_RELEASE);
	write_switches(f, 5, 2000);
	struct rlimit was = limit_room(4096);
	uint64_t got = ctp_harvest_rings(&f->h, 0, NULL);
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);
	assert_int_equal(got, 0);
	assert_int_equal(f->h.parked, 1);

	write_switches(f, 2, 3000);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 7 * sizeof(struct ctp_rec_switch));
	struct pass p = read_pass(f);
	assert_int_equal(p.records, 7);
	assert_int_equal(p.last_ts, 3001);
	assert_int_equal(f->h.parked, 0);
}

/* A ring left a moment ago keeps its window: a thread starting soon will likely claim it. */
static void a_ring_left_a_moment_ago_keeps_its_window(void **state)
{
	struct fixture *f = *state;
	write_switches(f, 3, 1000);
	__atomic_store_n(&ring_of(f)->owner, 0, __ATOMIC_RELEASE);
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 3 * sizeof(struct ctp_rec_switch));
	assert_int_equal(ctp_harvest_rings(&f->h, 0, NULL), 0);
	assert_int_equal(f->h.parked, 0);
	assert_int_equal(read_pass(f).records, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_whole_pass_marks_its_start, setup, teardown),
		cmocka_unit_test_setup_teardown(
			a_grown_segment_costs_the_harvester_its_new_ring_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(
			rings_stay_harvested_while_a_new_one_cannot_be_mapped, setup, teardown),
		cmocka_unit_test_setup_teardown(records_without_spool_memory_are_counted_lost,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_pass_cut_short_marks_its_last_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_pass_cut_on_a_timeless_record_writes_no_mark,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_left_ring_read_to_its_end_is_parked_until_claimed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_ring_left_a_moment_ago_keeps_its_window, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

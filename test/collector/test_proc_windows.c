/* The converter's view of a process's segment (collector/proc.c): it maps the header's page and
 * each station chunk on its own, never the segment whole. A segment that grows by 64 MiB to
 * hold one new chunk costs the converter that chunk's room alone, under a limit (ulimit -v)
 * that leaves it 1 MiB: it used to map the whole file again at each growth, and under such a
 * limit it never saw the new chunk (the final states of the coroutines in it were missing). */
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
#include "collector/proc.h"

enum {
	SEG_SIZE = 256 * 1024,
	GROWN = 64 << 20,
	CHUNK_STATIONS = 16,
	FIRST_CHUNK = 4096,
	PID = 4343,
};

static int memfd;
static uint8_t *seg; /* the whole file, as the process maps it */

static struct ctp_header *hd(void)
{
	return (struct ctp_header *)seg;
}

static size_t chunk_bytes(void)
{
	return CTP_CACHE_LINE + CHUNK_STATIONS * ctp_station_size(hd()->stack_depth);
}

/* A station chunk of CHUNK_STATIONS stations from index `first`, at `off`, pushed on the list. */
static void add_chunk(uint64_t off, uint32_t first)
{
	struct ctp_station_chunk *c = (struct ctp_station_chunk *)(seg + off);
	*c = (struct ctp_station_chunk){.block = {.kind = CTP_BLOCK_STATIONS,
						  .size = chunk_bytes(),
						  .next = hd()->blocks_head},
					.first = first,
					.count = CHUNK_STATIONS,
					.stations_off = off + CTP_CACHE_LINE};
	__atomic_store_n(&hd()->blocks_head, off, __ATOMIC_RELEASE);
}

static int setup(void **state)
{
	(void)state;
	memfd = memfd_create("ctp-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, SEG_SIZE), 0);
	assert_int_equal(fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	/* Mapped as it will grow; only the file's first SEG_SIZE bytes are touched before. */
	seg = mmap(NULL, GROWN, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	assert_true(seg != MAP_FAILED);
	*hd() = (struct ctp_header){.magic = CTP_MAGIC,
				    .version = CTP_VERSION,
				    .header_size = sizeof(struct ctp_header),
				    .pid = PID,
				    .clock_kind = CTP_CLOCK_MONOTONIC_NS,
				    .stack_depth = 4,
				    .station_size = ctp_station_size(4),
				    .segment_size = SEG_SIZE,
				    .segment_max = GROWN};
	add_chunk(FIRST_CHUNK, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(seg, GROWN);
	close(memfd);
	return 0;
}

static void the_converter_maps_a_new_chunk_alone(void **state)
{
	(void)state;
	struct ctp_collector c = {0};
	struct ctp_spool_budget budget;
	ctp_spool_budget_init(&budget, 1u << 20);
	char why[160] = "";
	struct ctp_proc *p = ctp_proc_open(&c, memfd, PID, 1, &budget, why, sizeof(why));
	assert_non_null(p);
	assert_int_equal(p->nchunks, 1);
	assert_int_equal(p->chunks[0].ref.count, CHUNK_STATIONS);

	assert_int_equal(ftruncate(memfd, GROWN), 0);
	uint64_t far = GROWN - 2 * chunk_bytes();
	far -= far % CTP_CACHE_LINE;
	add_chunk(far, CHUNK_STATIONS);
	__atomic_store_n(&hd()->segment_size, GROWN, __ATOMIC_RELEASE);
	struct rlimit was;
	assert_int_equal(getrlimit(RLIMIT_AS, &was), 0);
	struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + (1u << 20),
			       .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_AS, &tight), 0);
	uint64_t before = ctp_mapped_bytes_now();
	ctp_proc_follow_growth(p);
	uint64_t added = ctp_mapped_bytes_now() - before;
	assert_int_equal(setrlimit(RLIMIT_AS, &was), 0);

	assert_int_equal(p->nchunks, 2);
	assert_int_equal(p->unmapped, 0);
	/* Oldest first, the order of the stations' indices. */
	assert_int_equal(p->chunks[0].off, FIRST_CHUNK);
	assert_int_equal(p->chunks[1].off, far);
	assert_int_equal(p->chunks[1].ref.first, CHUNK_STATIONS);
	assert_int_equal(p->chunks[1].ref.count, CHUNK_STATIONS);
	assert_ptr_equal(p->chunks[1].ref.stations,
			 (uint8_t *)p->chunks[1].window.view.base + far % 4096 + CTP_CACHE_LINE);
	assert_true(added <= chunk_bytes() + 2 * 4096);
	p->memfd = -1; /* the test's */
	ctp_proc_free(p);
	ctp_spool_budget_fini(&budget);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_converter_maps_a_new_chunk_alone, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* ctp-pstack's reading of a segment, on segments this test writes itself into a memfd of its own
 * process (so that ctp-pstack finds them through /proc/PID/fd exactly as in a traced program):
 * which memfd is taken and which refused, stations read under the seqlock (a torn one is
 * marked, not dropped), garbage skipped, waits that are over not shown, growth followed, and
 * coroutines grouped by stack and wait. Under ASan any read outside the mapping is an error. */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctp/segment.h"
#include "pstack/groups.h"
#include "pstack/locate.h"
#include "pstack/snapshot.h"

enum {
	SEG_SIZE = 64 * 1024,
	MAX_SIZE = 128 * 1024,
	DEPTH = 8,
	CHUNK_OFF = 4096,
	STATIONS_OFF = 8192,
	NSTATIONS = 10,
};

static int memfd = -1;
static uint8_t *seg; /* our read-write mapping of MAX_SIZE bytes */

static struct ctp_header *hdr(void)
{
	return (struct ctp_header *)seg;
}

static struct ctp_station *station(uint32_t i)
{
	return (struct ctp_station *)(seg + STATIONS_OFF + (size_t)i * ctp_station_size(DEPTH));
}

/* A memfd holding a valid segment of this process with one chunk of NSTATIONS free stations. */
static void make_segment(bool seal, uint32_t pid)
{
	memfd = memfd_create("ctp-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, SEG_SIZE), 0);
	if (seal)
		assert_int_equal(fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	seg = mmap(NULL, MAX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	assert_true(seg != MAP_FAILED);
	struct ctp_header *h = hdr();
	h->magic = CTP_MAGIC;
	h->version = CTP_VERSION;
	h->header_size = sizeof(*h);
	h->pid = pid;
	h->clock_kind = CTP_CLOCK_MONOTONIC_NS;
	h->segment_size = SEG_SIZE;
	h->segment_max = MAX_SIZE;
	h->stack_depth = DEPTH;
	h->station_size = ctp_station_size(DEPTH);
	h->stations_per_chunk = NSTATIONS;
	struct ctp_station_chunk *c = (struct ctp_station_chunk *)(seg + CHUNK_OFF);
	c->block.kind = CTP_BLOCK_STATIONS;
	c->block.size = sizeof(*c);
	c->first = 0;
	c->count = NSTATIONS;
	c->stations_off = STATIONS_OFF;
	h->blocks_head = CHUNK_OFF;
}

static int drop_segment(void **state)
{
	(void)state;
	if (seg)
		munmap(seg, MAX_SIZE);
	if (memfd >= 0)
		close(memfd);
	seg = NULL;
	memfd = -1;
	return 0;
}

/* Station i holds coroutine `coro` in `state`, suspended `ago_ns` before now; handed out, as the
 * preload hands them out, by raising station_count past it. */
static struct ctp_station *put(uint32_t i, uint64_t coro, uint32_t state, uint64_t ago_ns)
{
	if (hdr()->station_count <= i)
		hdr()->station_count = i + 1;
	struct ctp_station *s = station(i);
	s->seq = 2;
	s->state = state;
	s->coro = coro;
	s->kind = CTP_KIND_UCONTEXT;
	s->tid = 4242;
	s->entry = 0x1000 + coro;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	s->created = s->last_switch = now - ago_ns;
	s->switches = 7;
	s->wait_fd = -1;
	s->wait_op = 0;
	return s;
}

static void set_stack(struct ctp_station *s, uint64_t a, uint64_t b)
{
	s->frames[0] = a;
	s->frames[1] = b;
	s->stack_len = 2;
}

static void set_wait(struct ctp_station *s, int fd, uint32_t op, bool closed)
{
	s->wait_fd = fd;
	s->wait_op = ctp_wait_pack(op, s->switches) | (closed ? CTP_WAIT_CLOSED : 0);
}

static enum pstack_exit locate(struct pstack_source *out, char *why, size_t len)
{
	return pstack_locate(getpid(), out, why, len);
}

/* ---- finding the segment ---- */

static void no_segment_means_not_traced(void **state)
{
	(void)state;
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_NOT_TRACED);
	assert_non_null(strstr(why, "ctp-run"));
	assert_non_null(strstr(why, "LD_PRELOAD"));
}

static void another_process_segment_is_not_ours(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid() + 1);
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_NOT_TRACED);
	assert_non_null(strstr(why, "other processes"));
}

static void unsealed_segment_is_refused(void **state)
{
	(void)state;
	make_segment(false, (uint32_t)getpid());
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_BAD_SEGMENT);
	assert_non_null(strstr(why, "sealed"));
}

static void other_version_is_refused(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	hdr()->version = CTP_VERSION + 1;
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_BAD_SEGMENT);
	assert_non_null(strstr(why, "version"));
}

static void no_such_process(void **state)
{
	(void)state;
	struct pstack_source s;
	char why[512];
	assert_int_equal(pstack_locate(0x7ffffff0, &s, why, sizeof(why)), PSTACK_EXIT_NO_PROCESS);
}

/* ---- reading the stations ---- */

static const struct pstack_coro *find(const struct pstack_snapshot *snap, uint64_t coro)
{
	for (size_t i = 0; i < snap->ncoros; i++)
		if (snap->coros[i].coro == coro)
			return &snap->coros[i];
	return NULL;
}

static void stations_are_read_and_garbage_skipped(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	set_stack(put(0, 10, CTP_STATE_SUSPENDED, 2000000000ull), 0xa1, 0xb1);
	set_wait(station(0), 5, CTP_OP_READ, true);
	set_stack(put(1, 11, CTP_STATE_SUSPENDED, 1000000000ull), 0xa1, 0xb1);
	set_wait(station(1), 6, CTP_OP_READ, true);
	set_stack(put(2, 12, CTP_STATE_SUSPENDED, 1000000000ull), 0xa1, 0xb1);
	set_wait(station(2), 7, CTP_OP_READ, false);
	/* Running, with the fields of a wait that never ended by a switch: over all the same. */
	set_stack(put(3, 13, CTP_STATE_RUNNING, 0), 0xa2, 0xb2);
	set_wait(station(3), 8, CTP_OP_ACCEPT, false);
	put(4, 14, CTP_STATE_EXITED, 0);
	put(5, 15, 99, 0);			     /* no such state: garbage */
	put(6, 0, CTP_STATE_SUSPENDED, 0);	     /* no coroutine id: garbage */
	put(7, 17, CTP_STATE_SUSPENDED, 0)->seq = 5; /* its writer died mid-update */
	/* A wait from before its last resume (the epoch is older): over. */
	put(8, 18, CTP_STATE_SUSPENDED, 0);
	set_wait(station(8), 9, CTP_OP_WRITE, false);
	station(8)->switches++;
	/* A stack longer than the depth is cut to it. */
	put(9, 19, CTP_STATE_SUSPENDED, 0)->stack_len = 1000;

	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_OK);
	struct pstack_snapshot snap;
	pstack_snapshot_take(&s, &snap);
	assert_int_equal(snap.pid, getpid());
	assert_int_equal(snap.ncoros, 7); /* 10 11 12 13 17 18 19 */
	assert_int_equal(snap.ended, 1);
	assert_int_equal(snap.torn, 1);
	for (size_t i = 1; i < snap.ncoros; i++)
		assert_true(snap.coros[i - 1].coro < snap.coros[i].coro);

	const struct pstack_coro *c = find(&snap, 10);
	assert_non_null(c);
	assert_int_equal(c->state, CTP_STATE_SUSPENDED);
	assert_int_equal(c->wait_fd, 5);
	assert_int_equal(c->wait_op, CTP_OP_READ);
	assert_true(c->wait_closed);
	assert_false(c->torn);
	uint64_t ago = pstack_ago_ns(&snap, c->since_raw);
	assert_true(ago >= 2000000000ull && ago < 60000000000ull);
	uint32_t n;
	const uint64_t *pcs = pstack_stack_frames(&snap, c->stack, &n, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[0], 0xa1);
	assert_int_equal(find(&snap, 11)->stack, c->stack);

	c = find(&snap, 13);
	assert_int_equal(c->state, CTP_STATE_RUNNING);
	assert_int_equal(c->wait_fd, -1);
	assert_int_equal(c->stack, 0); /* a running coroutine's frames are its previous suspend's */
	assert_true(find(&snap, 17)->torn);
	assert_int_equal(find(&snap, 18)->wait_fd, -1);
	pcs = pstack_stack_frames(&snap, find(&snap, 19)->stack, &n, NULL);
	assert_int_equal(n, DEPTH);

	struct pstack_groups g;
	pstack_groups_make(&snap, &g);
	/* {10, 11} closed read at one stack; {12} live read there; {13} running; {17, 18} suspended
	 * with no stack and no wait; {19} at its own stack. */
	assert_int_equal(g.groups[0].count, 2);
	assert_true(g.groups[0].wait_closed);
	assert_int_equal(snap.coros[g.members[g.groups[0].first]].coro, 10);
	size_t total = 0;
	for (size_t i = 0; i < g.ngroups; i++)
		total += g.groups[i].count;
	assert_int_equal(total, snap.ncoros);
	assert_int_equal(g.ngroups, 5);
	pstack_groups_free(&g);
	pstack_snapshot_free(&snap);
	pstack_source_close(&s);
}

/* A frame in the preload's makecontext trampoline reads as the return address it stands in for,
 * once the header names both; the stack then reaches its coroutine's start. */
static void trampoline_frames_read_as_untraced(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	set_stack(put(0, 10, CTP_STATE_SUSPENDED, 0), 0xa1, 0x5010);
	set_stack(put(1, 11, CTP_STATE_SUSPENDED, 0), 0xa2, 0x5040); /* just past it */
	for (int named = 0; named < 2; named++) {
		hdr()->entry_tramp_lo = 0x5000;
		hdr()->entry_tramp_hi = 0x5040;
		hdr()->entry_tramp_untraced = named ? 0x7700 : 0;
		struct pstack_source s;
		char why[512];
		assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_OK);
		struct pstack_snapshot snap;
		pstack_snapshot_take(&s, &snap);
		uint32_t n;
		bool reaches_start;
		const uint64_t *pcs =
			pstack_stack_frames(&snap, find(&snap, 10)->stack, &n, &reaches_start);
		assert_int_equal(n, 2);
		assert_int_equal(pcs[0], 0xa1);
		assert_int_equal(pcs[1], named ? 0x7700 : 0x5010);
		assert_int_equal(reaches_start, named);
		pcs = pstack_stack_frames(&snap, find(&snap, 11)->stack, &n, &reaches_start);
		assert_int_equal(pcs[1], 0x5040);
		assert_false(reaches_start);
		pstack_snapshot_free(&snap);
		pstack_source_close(&s);
	}
}

static void bad_blocks_are_ignored(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	put(0, 10, CTP_STATE_SUSPENDED, 0);
	/* A chunk whose stations lie past the end of the file, pushed in front of the good one. */
	struct ctp_station_chunk *bad = (struct ctp_station_chunk *)(seg + 2048);
	bad->block.kind = CTP_BLOCK_STATIONS;
	bad->block.size = sizeof(*bad);
	bad->count = 1000;
	bad->stations_off = SEG_SIZE - 64;
	bad->block.next = CHUNK_OFF;
	/* And a block pointing at itself in front of both: the walk must end. */
	struct ctp_block *loop = (struct ctp_block *)(seg + 1024);
	loop->kind = CTP_BLOCK_MODULES;
	loop->size = sizeof(*loop);
	loop->next = 1024;
	hdr()->blocks_head = 1024;
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_OK);
	struct pstack_snapshot snap;
	pstack_snapshot_take(&s, &snap);
	assert_int_equal(snap.ncoros, 0); /* the cycle hides the good chunk; nothing is invented */
	pstack_snapshot_free(&snap);

	loop->next = 2048;
	pstack_snapshot_take(&s, &snap);
	assert_int_equal(snap.ncoros, 1);
	assert_int_equal(snap.coros[0].coro, 10);
	pstack_snapshot_free(&snap);
	pstack_source_close(&s);
}

/* Slots past the header's station_count were never handed out: not read at all (in a live
 * process, reading them would put pages of zeros into its segment), whatever they hold. */
static void slots_never_handed_out_are_not_read(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	put(0, 10, CTP_STATE_SUSPENDED, 0);
	put(1, 11, CTP_STATE_SUSPENDED, 0);
	hdr()->station_count = 1; /* as if station 1 had never been handed out */
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_OK);
	struct pstack_snapshot snap;
	pstack_snapshot_take(&s, &snap);
	assert_int_equal(snap.ncoros, 1);
	assert_int_equal(snap.coros[0].coro, 10);
	pstack_snapshot_free(&snap);
	pstack_source_close(&s);
}

static void growth_is_followed(void **state)
{
	(void)state;
	make_segment(true, (uint32_t)getpid());
	put(0, 10, CTP_STATE_SUSPENDED, 0);
	struct pstack_source s;
	char why[512];
	assert_int_equal(locate(&s, why, sizeof(why)), PSTACK_EXIT_OK);
	assert_int_equal(s.view.size, SEG_SIZE);
	/* The process grows the file, then pushes a chunk that lies beyond our first mapping, in
	 * the producer's order: ftruncate, segment_size, the block, the head. */
	assert_int_equal(ftruncate(memfd, MAX_SIZE), 0);
	hdr()->segment_size = MAX_SIZE;
	struct ctp_station_chunk *c = (struct ctp_station_chunk *)(seg + SEG_SIZE);
	c->block.kind = CTP_BLOCK_STATIONS;
	c->block.size = sizeof(*c);
	c->first = NSTATIONS;
	c->count = 1;
	c->stations_off = SEG_SIZE + 1024;
	struct ctp_station *st = (struct ctp_station *)(seg + SEG_SIZE + 1024);
	st->seq = 2;
	st->state = CTP_STATE_CREATED;
	st->coro = 20;
	st->kind = CTP_KIND_FCONTEXT;
	hdr()->station_count = NSTATIONS + 1;
	c->block.next = hdr()->blocks_head;
	hdr()->blocks_head = SEG_SIZE;
	struct pstack_snapshot snap;
	pstack_snapshot_take(&s, &snap);
	assert_int_equal(s.view.size, MAX_SIZE);
	assert_int_equal(snap.ncoros, 2);
	assert_int_equal(snap.coros[1].coro, 20);
	assert_int_equal(snap.coros[1].state, CTP_STATE_CREATED);
	pstack_snapshot_free(&snap);
	pstack_source_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_segment_means_not_traced),
		cmocka_unit_test_teardown(another_process_segment_is_not_ours, drop_segment),
		cmocka_unit_test_teardown(unsealed_segment_is_refused, drop_segment),
		cmocka_unit_test_teardown(other_version_is_refused, drop_segment),
		cmocka_unit_test(no_such_process),
		cmocka_unit_test_teardown(stations_are_read_and_garbage_skipped, drop_segment),
		cmocka_unit_test_teardown(trampoline_frames_read_as_untraced, drop_segment),
		cmocka_unit_test_teardown(bad_blocks_are_ignored, drop_segment),
		cmocka_unit_test_teardown(slots_never_handed_out_are_not_read, drop_segment),
		cmocka_unit_test_teardown(growth_is_followed, drop_segment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Turning ring records into trace lines (collector/records.c): each kind of record gives the
 * line docs/trace-format.md describes, stacks are written once before the first line that
 * refers to them, a coroutine named before its creation is announced first, the coroutine table
 * follows the switches; a record too short for what it claims is counted as malformed and gives
 * no line; a kind this collector does not know is skipped; a spooled backlog leaves as it is
 * read. Lines are read back from the zstd file with the trace reader, as ctp-cat reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/proc.h"
#include "collector/records.h"
#include "collector/spool.h"
#include "cat/reader/trace_reader.h"

#define PID 77
#define TID 1234

struct fixture {
	char path[64];
	struct ctp_collector c;
	struct ctp_proc p;
	struct ctp_ring_state rs;
	struct ctp_visit_ctx v;
	uint64_t segment[64]; /* a segment with no blocks: no modules, no stations */
	uint64_t ring[512];   /* the records, as the converter sees a spooled batch */
	size_t used;
	json_t *lines[64]; /* what was written, header left out */
	size_t nlines;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->path, sizeof(f->path), "/tmp/ctp-records-test.XXXXXX");
	int fd = mkstemp(f->path);
	if (fd < 0)
		return -1;
	close(fd);
	struct ctp_zwriter *z = ctp_zwriter_open(f->path, 1);
	if (!z)
		return -1;
	ctp_emit_init(&f->c.em, z);
	ctp_emit_trace(&f->c.em, 1);
	f->p.c = &f->c;
	f->p.pid = PID;
	f->p.clock_kind = CTP_CLOCK_MONOTONIC_NS;
	ctp_ended_coros_init(&f->p.ended);
	f->p.view.base = (uint8_t *)f->segment;
	f->p.view.size = sizeof(f->segment);
	f->v.p = &f->p;
	f->v.rs = &f->rs;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	if (f->c.em.z)
		ctp_zwriter_close(f->c.em.z, NULL);
	for (size_t i = 0; i < f->nlines; i++)
		json_decref(f->lines[i]);
	ctp_coro_table_free(&f->p.coros);
	ctp_ended_coros_free(&f->p.ended);
	ctp_stack_table_free(&f->p.stacks);
	ctp_symcache_free(&f->p.syms);
	ctp_reorder_free(&f->p.order);
	free(f->p.rings);
	unlink(f->path);
	/* The writer kept the empty file mkstemp made as FILE.old, as it keeps any it replaces. */
	char old[sizeof(f->path) + 4];
	snprintf(old, sizeof(old), "%s.old", f->path);
	unlink(old);
	free(f);
	return 0;
}

/* Puts a record into the ring after the previous ones and converts it. */
static void visit(struct fixture *f, const void *rec, size_t size)
{
	assert_true(size % 8 == 0);
	assert_true(f->used + size <= sizeof(f->ring));
	uint8_t *at = (uint8_t *)f->ring + f->used;
	memcpy(at, rec, size);
	f->used += size;
	ctp_records_visit(&f->v, (const struct ctp_rec *)at, sizeof(f->ring) - (f->used - size));
}

/* Closes the trace and reads its lines back. */
static void read_back(struct fixture *f)
{
	assert_true(ctp_zwriter_close(f->c.em.z, NULL));
	f->c.em.z = NULL;
	struct ctp_trace_reader *r = ctp_trace_reader_open(f->path);
	assert_non_null(r);
	struct ctp_trace_line line;
	enum ctp_trace_item item;
	bool header = true;
	while ((item = ctp_trace_reader_next(r, &line)) != CTP_TRACE_END) {
		assert_int_equal(item, CTP_TRACE_LINE);
		if (header) {
			header = false;
			continue;
		}
		assert_true(f->nlines < sizeof(f->lines) / sizeof(f->lines[0]));
		f->lines[f->nlines++] = ctp_trace_line_json(&line);
	}
	assert_int_equal(ctp_trace_reader_end(r)->kind, CTP_TRACE_COMPLETE);
	ctp_trace_reader_free(r);
}

static const char *str(const json_t *line, const char *key)
{
	const json_t *v = json_object_get(line, key);
	assert_non_null(v);
	return json_is_null(v) ? "null" : json_string_value(v);
}

static uint64_t num(const json_t *line, const char *key)
{
	const json_t *v = json_object_get(line, key);
	assert_non_null(v);
	assert_true(json_is_integer(v));
	return (uint64_t)json_integer_value(v);
}

static bool is_null(const json_t *line, const char *key)
{
	const json_t *v = json_object_get(line, key);
	return v != NULL && json_is_null(v);
}

static void thread_record(struct fixture *f, uint64_t coro, uint64_t ts)
{
	struct ctp_rec_thread r = {.h = {.size = sizeof(r), .type = CTP_REC_THREAD},
				   .tid = TID,
				   .coro = coro,
				   .ts = ts};
	visit(f, &r, sizeof(r));
}

struct create_rec {
	struct ctp_rec_create r;
	uint64_t frames[2];
};

static void create_record(struct fixture *f, uint64_t coro, uint64_t parent, uint64_t ts)
{
	struct create_rec c = {
		.r = {.h = {.size = sizeof(c),
			    .type = CTP_REC_CREATE,
			    .nframes = 2,
			    .aux = CTP_KIND_UCONTEXT},
		      .ts = ts,
		      .coro = coro,
		      .parent = parent,
		      .entry = 0x4000,
		      .stack_lo = 0x10000,
		      .stack_hi = 0x20000},
		.frames = {0x1111, 0x2222},
	};
	visit(f, &c, sizeof(c));
}

struct switch_rec {
	struct ctp_rec_switch r;
	uint64_t frames[2];
};

static void switch_record(struct fixture *f, uint64_t from, uint64_t to, uint32_t how, uint64_t ts,
			  uint8_t nframes)
{
	struct switch_rec s = {
		.r = {.h = {.size = (uint16_t)(sizeof(s.r) + 8 * nframes),
			    .type = CTP_REC_SWITCH,
			    .nframes = nframes,
			    .aux = how},
		      .ts = ts,
		      .from = from,
		      .to = to},
		.frames = {0x1111, 0x2222},
	};
	visit(f, &s, s.r.h.size);
}

/* The end of `coro`: how it ended is the switch that ended it (aux), or 0 for none. */
static void exit_record(struct fixture *f, uint64_t coro, uint32_t how, uint64_t ts)
{
	struct ctp_rec_exit e = {
		.h = {.size = sizeof(e), .type = CTP_REC_EXIT, .aux = how}, .ts = ts, .coro = coro};
	visit(f, &e, sizeof(e));
}

/* A close of fd by `coro` (the process's thread, here) while `waiter` waited to read it. */
static void close_record(struct fixture *f, uint64_t coro, int32_t fd, uint64_t waiter, uint64_t ts)
{
	struct ctp_rec_fd close = {
		.h = {.size = sizeof(close), .type = CTP_REC_FD, .aux = CTP_FD_CLOSE},
		.ts = ts,
		.coro = coro,
		.fd = fd,
		.op = CTP_OP_READ,
		.arg = waiter};
	visit(f, &close, sizeof(close));
}

/* Collects the log of ended coroutines. */
static void gather_ended(const struct ctp_ended_coro *c, void *ctx)
{
	struct ctp_ended_coro *out = ctx;
	while (out->id)
		out++;
	*out = *c;
}

/* A thread, a coroutine it makes, two switches, its end: the lines, the stacks once, the table.
 * The preload writes a makecontext coroutine's EXIT (how: return) just before its last switch,
 * and after that switch the coroutine leaves the table for the log of ended ones. */
static void a_coroutines_life_becomes_lines(void **state)
{
	struct fixture *f = *state;
	thread_record(f, 1, 1000);
	assert_int_equal(f->rs.tid, TID);
	create_record(f, 2, 1, 1100);
	switch_record(f, 1, 2, CTP_HOW_SWAPCONTEXT, 1200, 2); /* the same frames as the creation */
	exit_record(f, 2, CTP_HOW_RETURN, 1300);
	switch_record(f, 2, 1, CTP_HOW_RETURN, 1300, 0);
	assert_int_equal(f->v.malformed, 0);

	const struct ctp_coro *c1 = ctp_coro_find(&f->p.coros, 1);
	assert_non_null(c1);
	assert_int_equal(c1->state, CTP_STATE_RUNNING);
	assert_int_equal(c1->switches, 2); /* its start and one resume, as its station counts */
	assert_int_equal(c1->since, 1300);
	assert_null(ctp_coro_find(&f->p.coros, 2));
	assert_int_equal(f->p.coros.count, 1);
	assert_true(ctp_ended_coros_has(&f->p.ended, 2));
	struct ctp_ended_coro ended[2] = {{0}};
	assert_true(ctp_ended_coros_each(&f->p.ended, gather_ended, ended));
	assert_int_equal(ended[0].id, 2);
	assert_int_equal(ended[0].since, 1300);
	assert_int_equal(ended[0].tid, TID);
	assert_int_equal(ended[0].switches, 1);
	assert_int_equal(ended[1].id, 0);   /* one ended, once */
	assert_int_equal(f->c.em.coros, 1); /* the summary counts the thread's stack apart */
	assert_int_equal(f->c.em.threads, 1);
	assert_int_equal(f->c.em.switches, 2);

	read_back(f);
	assert_int_equal(f->nlines, 6);
	const json_t *thread = f->lines[0], *stack = f->lines[1], *coro = f->lines[2];
	const json_t *sw1 = f->lines[3], *end = f->lines[4], *sw2 = f->lines[5];
	assert_string_equal(str(thread, "type"), "coro");
	assert_int_equal(num(thread, "pid"), PID);
	assert_int_equal(num(thread, "coro"), 1);
	assert_string_equal(str(thread, "kind"), "thread");
	assert_int_equal(num(thread, "tid"), TID);
	assert_int_equal(num(thread, "ts"), 1000);

	/* The stack line comes before the coro line that refers to it. */
	assert_string_equal(str(stack, "type"), "stack");
	assert_int_equal(num(stack, "id"), 1);
	const json_t *frames = json_object_get(stack, "frames");
	assert_int_equal(json_array_size(frames), 2);
	assert_string_equal(str(json_array_get(frames, 0), "addr"), "0x1111");
	assert_string_equal(str(json_array_get(frames, 1), "addr"), "0x2222");
	assert_true(is_null(json_array_get(frames, 0), "sym")); /* in no known module */

	assert_string_equal(str(coro, "type"), "coro");
	assert_int_equal(num(coro, "coro"), 2);
	assert_string_equal(str(coro, "kind"), "ucontext");
	assert_string_equal(str(coro, "entry_addr"), "0x4000");
	assert_true(is_null(coro, "entry"));
	assert_int_equal(num(coro, "parent"), 1);
	assert_int_equal(num(coro, "tid"), TID);
	assert_int_equal(num(coro, "ts"), 1100);
	assert_int_equal(num(coro, "stack"), 1);

	assert_string_equal(str(sw1, "type"), "switch");
	assert_int_equal(num(sw1, "tid"), TID);
	assert_int_equal(num(sw1, "ts"), 1200);
	assert_int_equal(num(sw1, "from"), 1);
	assert_int_equal(num(sw1, "to"), 2);
	assert_string_equal(str(sw1, "how"), "swapcontext");
	assert_int_equal(num(sw1, "stack"), 1); /* interned once, referred to again */
	/* Trace format 2: how it ended, before the switch that leaves it. */
	assert_string_equal(str(end, "type"), "coro_end");
	assert_int_equal(num(end, "coro"), 2);
	assert_int_equal(num(end, "tid"), TID);
	assert_int_equal(num(end, "ts"), 1300);
	assert_string_equal(str(end, "how"), "returned");
	assert_string_equal(str(sw2, "how"), "return");
	assert_true(is_null(sw2, "stack"));
}

/* Records that name a coroutine after it ended and left the table (a close naming it as a
 * waiter, a garbled switch to it) do not announce it again, nor bring it back into the table;
 * one whose end came with no switch of its own (its stack freed: how 0) leaves at its end. */
static void an_ended_coroutine_stays_gone(void **state)
{
	struct fixture *f = *state;
	thread_record(f, 1, 1000);
	create_record(f, 2, 1, 1100);
	create_record(f, 3, 1, 1150);
	switch_record(f, 1, 2, CTP_HOW_SWAPCONTEXT, 1200, 0);
	exit_record(f, 2, CTP_HOW_RETURN, 1300);
	switch_record(f, 2, 1, CTP_HOW_RETURN, 1300, 0);
	exit_record(f, 3, 0, 1350); /* abandoned */
	assert_null(ctp_coro_find(&f->p.coros, 3));
	assert_true(ctp_ended_coros_has(&f->p.ended, 3));

	close_record(f, 1, 7, 2, 1400);
	switch_record(f, 1, 3, CTP_HOW_SWAPCONTEXT, 1500, 0);
	exit_record(f, 2, CTP_HOW_RETURN, 1600); /* its end again */
	assert_null(ctp_coro_find(&f->p.coros, 2));
	assert_null(ctp_coro_find(&f->p.coros, 3));
	assert_int_equal(f->p.coros.count, 1);

	read_back(f);
	size_t coro_lines = 0, end_lines = 0, fd_lines = 0, switch_lines = 0;
	for (size_t i = 0; i < f->nlines; i++) {
		const char *type = str(f->lines[i], "type");
		coro_lines += strcmp(type, "coro") == 0;
		end_lines += strcmp(type, "coro_end") == 0;
		fd_lines += strcmp(type, "fd") == 0;
		switch_lines += strcmp(type, "switch") == 0;
	}
	assert_int_equal(coro_lines, 3); /* the thread, 2 and 3, once each */
	assert_int_equal(end_lines, 2);
	assert_int_equal(fd_lines, 1);	   /* the close is written, naming its waiter */
	assert_int_equal(switch_lines, 3); /* so is the switch */
}

/* A switch to a coroutine whose creation was never seen (dropped, or made before a fork): it
 * is announced with what is known (nothing here: no station holds it) before the switch. */
static void an_unknown_coroutine_is_announced_first(void **state)
{
	struct fixture *f = *state;
	thread_record(f, 1, 1000);
	switch_record(f, 1, 9, CTP_HOW_JUMP_FCONTEXT, 1500, 0);
	read_back(f);
	assert_int_equal(f->nlines, 3);
	assert_string_equal(str(f->lines[1], "type"), "coro");
	assert_int_equal(num(f->lines[1], "coro"), 9);
	assert_true(is_null(f->lines[1], "kind"));
	assert_true(is_null(f->lines[1], "parent"));
	assert_true(is_null(f->lines[1], "ts"));
	assert_string_equal(str(f->lines[2], "type"), "switch");
	assert_string_equal(str(f->lines[2], "how"), "jump_fcontext");
	assert_int_equal(num(f->lines[2], "to"), 9);
	/* A create record that arrives later (from another thread's ring) adds no second line. */
}

static void a_late_create_does_not_announce_twice(void **state)
{
	struct fixture *f = *state;
	switch_record(f, 0, 9, CTP_HOW_SWAPCONTEXT, 1500, 0);
	create_record(f, 9, 1, 1400);
	read_back(f);
	size_t coro_lines = 0;
	for (size_t i = 0; i < f->nlines; i++)
		if (strcmp(str(f->lines[i], "type"), "coro") == 0 && num(f->lines[i], "coro") == 9)
			coro_lines++;
	assert_int_equal(coro_lines, 1);
}

/* fd records: a close names its waiter (announced if unknown), a registration its epoll fd. */
static void fd_records_become_fd_lines(void **state)
{
	struct fixture *f = *state;
	thread_record(f, 1, 1000);
	close_record(f, 1, 7, 5, 2000);
	struct ctp_rec_fd reg = {
		.h = {.size = sizeof(reg), .type = CTP_REC_FD, .aux = CTP_FD_REGISTER},
		.ts = 2100,
		.coro = 1,
		.fd = 8,
		.arg = 3};
	visit(f, &reg, sizeof(reg));
	read_back(f);
	assert_int_equal(f->nlines, 4);
	assert_int_equal(num(f->lines[1], "coro"), 5); /* the waiter, announced */
	const json_t *c = f->lines[2], *r = f->lines[3];
	assert_string_equal(str(c, "type"), "fd");
	assert_string_equal(str(c, "event"), "close");
	assert_string_equal(str(c, "op"), "read");
	assert_int_equal(num(c, "fd"), 7);
	assert_int_equal(num(c, "waiter"), 5);
	assert_int_equal(num(c, "ts"), 2000);
	assert_null(json_object_get(c, "epfd"));
	assert_string_equal(str(r, "event"), "register");
	assert_int_equal(num(r, "epfd"), 3);
	assert_true(is_null(r, "waiter"));
}

/* Records that claim more than they hold give no line and are counted; so do sizes that run
 * past the batch. A kind added later is skipped without being called malformed. */
static void malformed_and_unknown_records(void **state)
{
	struct fixture *f = *state;
	thread_record(f, 1, 1000);

	/* A switch that claims 3 frames in the room of none. */
	struct ctp_rec_switch s = {.h = {.size = sizeof(s), .type = CTP_REC_SWITCH, .nframes = 3},
				   .ts = 1,
				   .from = 1,
				   .to = 2};
	visit(f, &s, sizeof(s));
	assert_int_equal(f->v.malformed, 1);
	/* A create cut short: the size of a bare header. */
	struct ctp_rec_create c = {.h = {.size = 8, .type = CTP_REC_CREATE}, .coro = 3};
	visit(f, &c, sizeof(c));
	assert_int_equal(f->v.malformed, 2);
	/* A size smaller than the header itself. */
	struct ctp_rec_exit e = {.h = {.size = 4, .type = CTP_REC_EXIT}, .coro = 1};
	visit(f, &e, sizeof(e));
	assert_int_equal(f->v.malformed, 3);
	/* A size that runs past the end of the batch. */
	f->used = sizeof(f->ring) - sizeof(s);
	struct ctp_rec_switch past = s;
	past.h.nframes = 0;
	past.h.size = sizeof(s) + 8;
	visit(f, &past, sizeof(past));
	assert_int_equal(f->v.malformed, 4);
	/* An unknown kind: skipped, not malformed. */
	f->used = 1024;
	struct ctp_rec_switch unknown = s;
	unknown.h.type = 42;
	unknown.h.nframes = 0;
	visit(f, &unknown, sizeof(unknown));
	assert_int_equal(f->v.malformed, 4);

	/* A switch whose `how` this collector does not know: written, with how null. */
	switch_record(f, 1, 2, 99, 3000, 0);
	assert_int_equal(f->v.malformed, 4);

	read_back(f);
	assert_int_equal(f->nlines, 3); /* the thread, coroutine 2 announced, the last switch */
	assert_int_equal(num(f->lines[1], "coro"), 2);
	assert_string_equal(str(f->lines[2], "type"), "switch");
	assert_true(is_null(f->lines[2], "how"));
	assert_null(ctp_coro_find(&f->p.coros, 3));
}

/* Stacks of one frame (a switch's call site alone) are looked up in a cache before the table:
 * each frame keeps its own id however many frames share the cache's places, a frame in the
 * makecontext trampoline has the id of the address it stands for, and a stack of one frame is
 * not the longer stack it begins. */
static void one_frame_stacks_keep_their_ids(void **state)
{
	struct fixture *f = *state;
	struct ctp_header *h = (struct ctp_header *)f->segment;
	h->entry_tramp_lo = 0x9000;
	h->entry_tramp_hi = 0x9100;
	h->entry_tramp_untraced = 0x7777;
	enum { FRAMES = 4 * CTP_PROC_ONE_FRAME_STACKS };
	for (uint32_t i = 0; i < FRAMES; i++) {
		uint64_t frame = 0x100000 + 16 * i;
		assert_int_equal(ctp_proc_intern_stack(&f->p, &frame, 1), i + 1);
	}
	for (uint32_t i = FRAMES; i-- > 0;) {
		uint64_t frame = 0x100000 + 16 * i;
		assert_int_equal(ctp_proc_intern_stack(&f->p, &frame, 1), i + 1);
	}
	uint64_t in_trampoline = 0x9010, untraced = 0x7777;
	uint32_t id = ctp_proc_intern_stack(&f->p, &in_trampoline, 1);
	assert_int_equal(id, FRAMES + 1);
	assert_int_equal(ctp_proc_intern_stack(&f->p, &untraced, 1), id);
	assert_int_equal(ctp_proc_intern_stack(&f->p, &in_trampoline, 1), id);
	uint64_t two[2] = {0x100000, 0x2222};
	assert_int_equal(ctp_proc_intern_stack(&f->p, two, 2), FRAMES + 2);
	assert_int_equal(ctp_proc_intern_stack(&f->p, two, 1), 1);
	assert_int_equal(f->p.stacks.count, FRAMES + 2);
}

/* Records stamped with the TSC are converted with the collector's model; without one (or with
 * CLOCK_MONOTONIC stamps) they pass unchanged. */
static void clock_readings_are_converted(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(ctp_proc_ts(&f->p, 5000), 5000);
	f->p.clock_kind = CTP_CLOCK_TSC;
	assert_int_equal(ctp_proc_ts(&f->p, 5000), 5000); /* no model */
	f->c.have_tsc = true;
	f->c.tsc = (struct ctp_tsc_model){
		.piece = {{.tsc0 = 1000, .ns0 = 1000000, .ns_per_tick = 0.5}},
		.count = 1,
		.cal_tsc = 1000,
		.cal_ns = 1000000,
		.ns_per_tick = 0.5,
	};
	assert_int_equal(ctp_proc_ts(&f->p, 5000), 1002000);
	assert_int_equal(ctp_proc_ts(&f->p, 1000), 1000000);
	thread_record(f, 1, 3000);
	read_back(f);
	assert_int_equal(num(f->lines[0], "ts"), 1001000);
}

/* Records of the spooled passes below are this far apart (ns, the fixture's clock): a busy
 * thread's pace, so that the flight time the converter waits for is a few records' worth. */
#define RECORD_STEP_NS 10000

/* Spools one harvest pass: a batch of ring 0 with `n` switches stamped from *ts on, then the
 * pass's mark, as a pass that began after the last of them was stamped writes it. */
static void spool_pass(struct ctp_spool *spool, uint32_t n, uint64_t *ts)
{
	size_t bytes = n * sizeof(struct ctp_rec_switch), room;
	uint8_t *w = ctp_spool_write_room(spool, sizeof(struct ctp_spool_batch) + bytes, &room);
	*(struct ctp_spool_batch *)w =
		(struct ctp_spool_batch){.ring = 0, .owner = TID, .bytes = (uint32_t)bytes};
	struct ctp_rec_switch *rec = (struct ctp_rec_switch *)(w + sizeof(struct ctp_spool_batch));
	for (uint32_t i = 0; i < n; i++, *ts += RECORD_STEP_NS)
		rec[i] = (struct ctp_rec_switch){.h = {.size = sizeof(*rec),
						       .type = CTP_REC_SWITCH,
						       .aux = CTP_HOW_SWAPCONTEXT},
						 .ts = *ts,
						 .from = 1 + i % 2,
						 .to = 2 - i % 2,
						 .from_station = UINT32_MAX};
	ctp_spool_commit(spool, sizeof(struct ctp_spool_batch) + bytes);
	w = ctp_spool_write_room(spool, sizeof(struct ctp_spool_batch), &room);
	*(struct ctp_spool_batch *)w =
		(struct ctp_spool_batch){.ring = CTP_SPOOL_PASS, .complete_before = *ts};
	ctp_spool_commit(spool, sizeof(struct ctp_spool_batch));
}

/* A spool converted whole (the final drain, a snapshot, the backlog after a hold) is let out as
 * it is read: what each pass completes leaves before the next piece of the spool is queued, so
 * the queue that puts records in time order holds a few passes, not the backlog, and keeps no
 * more memory than that. Every record still becomes its line. */
static void a_backlog_is_let_out_as_it_is_read(void **state)
{
	struct fixture *f = *state;
	enum { PASSES = 1024, PER_PASS = 256 }; /* 10 MiB of records, 40 spool chunks */
	struct ctp_spool_budget budget;
	ctp_spool_budget_init(&budget, 64u << 20);
	ctp_spool_init(&f->p.hv.spool, &budget);
	uint64_t ts = 1000000000;
	for (int i = 0; i < PASSES; i++)
		spool_pass(&f->p.hv.spool, PER_PASS, &ts);
	uint64_t spooled = (uint64_t)PASSES * (2 * sizeof(struct ctp_spool_batch) +
					       PER_PASS * sizeof(struct ctp_rec_switch));
	assert_int_equal(ctp_proc_convert(&f->p, 0), spooled);
	assert_int_equal(f->c.em.switches, (uint64_t)PASSES * PER_PASS);
	assert_int_equal(f->p.order.nq, 1);
	assert_true(f->p.order.held_peak <= 2 * CTP_SPOOL_CHUNK);
	ctp_spool_free(&f->p.hv.spool);
	ctp_spool_budget_fini(&budget);
}

/* While the rings are behind, a record leaves only once it is older than the next-to-last mark
 * and some milliseconds older than the last: a thread preempted between stamping a record and
 * publishing it may still bring an older one, which a harvester passing over and over would not
 * have waited for. */
static void records_wait_for_ones_in_flight(void **state)
{
	struct fixture *f = *state;
	enum { PASSES = 100, PER_PASS = 100 }; /* 100 ms of records, a mark every millisecond */
	struct ctp_spool_budget budget;
	ctp_spool_budget_init(&budget, 64u << 20);
	ctp_spool_init(&f->p.hv.spool, &budget);
	uint64_t first = 1000000000, ts = first;
	for (int i = 0; i < PASSES; i++)
		spool_pass(&f->p.hv.spool, PER_PASS, &ts);
	f->p.hv.cut_short = 1; /* the last pass left records in a ring */
	ctp_proc_convert(&f->p, 0);
	/* The last mark is at `ts`: what was stamped up to 10 ms before it leaves. */
	uint64_t settled = ts - 10000000;
	assert_true(settled < f->p.pass_before);
	assert_int_equal(f->c.em.switches, (settled - first) / RECORD_STEP_NS + 1);
	ctp_spool_free(&f->p.hv.spool);
	ctp_spool_budget_fini(&budget);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_coroutines_life_becomes_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(an_ended_coroutine_stays_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(an_unknown_coroutine_is_announced_first, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_late_create_does_not_announce_twice, setup,
						teardown),
		cmocka_unit_test_setup_teardown(fd_records_become_fd_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_and_unknown_records, setup, teardown),
		cmocka_unit_test_setup_teardown(one_frame_stacks_keep_their_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(clock_readings_are_converted, setup, teardown),
		cmocka_unit_test_setup_teardown(a_backlog_is_let_out_as_it_is_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(records_wait_for_ones_in_flight, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

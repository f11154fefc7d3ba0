/* The event model (cat/model/): the one (pid, id) table, the decoder with its format 1 ends,
 * the run tracker, and the names of the streaming views across processes that come and go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cat/model/event.h"
#include "cat/model/names.h"
#include "cat/model/resymbolize.h"
#include "cat/model/runs.h"
#include "ctp/segment.h"
#include "ctp/symbolize.h"

static void idmap_puts_gets_and_deletes(void **state)
{
	(void)state;
	struct ctp_idmap m = {0};
	assert_int_equal(ctp_idmap_get(&m, 1, 2), CTP_IDMAP_NONE);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(ctp_idmap_put(&m, i % 7, i, i), 0);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(ctp_idmap_get(&m, i % 7, i), i);
	assert_int_equal(ctp_idmap_get(&m, 1, 0), CTP_IDMAP_NONE); /* (0 % 7, 0) only */
	/* Deleting every other entry keeps the rest findable (no tombstones to lose them). */
	for (uint32_t i = 0; i < 5000; i += 2)
		ctp_idmap_del(&m, i % 7, i);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(ctp_idmap_get(&m, i % 7, i), i % 2 ? i : CTP_IDMAP_NONE);
	assert_int_equal(ctp_idmap_put(&m, 3, 3, 9), 0); /* overwrite */
	assert_int_equal(ctp_idmap_get(&m, 3, 3), 9);
	ctp_idmap_free(&m);
}

/* Dense ids go to a row of their first key, ids far above the row's count and keys past the
 * rows to the slots; either way they are found, overwritten and deleted alike, and a row
 * emptied by deletes is given back. */
static void idmap_rows_and_slots_agree(void **state)
{
	(void)state;
	struct ctp_idmap m = {0};
	uint64_t far = 1u << 30;
	for (uint32_t a = 0; a < CTP_IDMAP_ROWS + 3; a++)
		for (uint32_t i = 1; i <= 3000; i++) {
			assert_int_equal(ctp_idmap_put(&m, a, i, a * 10000 + i), 0);
			assert_int_equal(ctp_idmap_put(&m, a, far + i, a + i), 0);
		}
	assert_int_equal(m.nrows, CTP_IDMAP_ROWS);
	assert_true(m.used >= 3 * 3000 + (CTP_IDMAP_ROWS + 3) * 3000); /* the rest in slots */
	for (uint32_t a = 0; a < CTP_IDMAP_ROWS + 3; a++)
		for (uint32_t i = 1; i <= 3000; i++) {
			assert_int_equal(ctp_idmap_get(&m, a, i), a * 10000 + i);
			assert_int_equal(ctp_idmap_get(&m, a, far + i), a + i);
		}
	assert_int_equal(ctp_idmap_get(&m, 0, 0), CTP_IDMAP_NONE);
	assert_int_equal(ctp_idmap_put(&m, 1, 5, 7), 0);
	assert_int_equal(ctp_idmap_get(&m, 1, 5), 7);
	for (uint32_t i = 1; i <= 3000; i++)
		ctp_idmap_del(&m, 0, i);
	assert_int_equal(m.nrows, CTP_IDMAP_ROWS - 1);
	assert_int_equal(ctp_idmap_get(&m, 0, 7), CTP_IDMAP_NONE);
	assert_int_equal(ctp_idmap_get(&m, 0, far + 7), 7);
	assert_int_equal(ctp_idmap_get(&m, 2, 7), 20007);
	ctp_idmap_free(&m);
}

struct fed {
	struct ctp_event_decoder d;
	struct ctp_event ev;
	bool has_derived;
	struct ctp_event derived;
	json_t *json;
};

static void feed(struct fed *f, const char *text)
{
	json_decref(f->json);
	f->json = json_loads(text, 0, NULL);
	assert_non_null(f->json);
	struct ctp_trace_line line = {.text = text, .len = strlen(text), .json = f->json};
	assert_int_equal(ctp_event_decode(&f->d, &line, &f->ev), 0);
	const struct ctp_event *d = ctp_event_derived(&f->d);
	f->has_derived = d != NULL;
	if (d)
		f->derived = *d;
	f->ev.line = NULL; /* the line above is gone after this call */
}

static void format_1_ends_are_derived_once(void **state)
{
	(void)state;
	struct fed f = {0};
	ctp_event_decoder_init(&f.d);
	feed(&f, "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":1,\"start\":1}");
	assert_int_equal(f.ev.type, CTP_EV_TRACE);
	assert_int_equal(f.ev.trace.version, 1);
	feed(&f, "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":50,\"from\":2,\"to\":1,"
		 "\"how\":\"return\",\"stack\":null}");
	assert_true(f.has_derived);
	assert_int_equal(f.derived.type, CTP_EV_CORO_END);
	assert_int_equal(f.derived.coro, 2);
	assert_int_equal(f.derived.ts, 50);
	assert_int_equal(f.derived.coro_end.how, CTP_END_RETURNED);
	assert_null(f.derived.line);
	assert_int_equal(f.ev.sw.how, CTP_HOW_RETURN);
	/* Its final state adds no second end; another coroutine's `exited` gets one, unknown. */
	feed(&f, "{\"type\":\"state\",\"pid\":7,\"coro\":2,\"state\":\"exited\",\"since\":50}");
	assert_false(f.has_derived);
	feed(&f, "{\"type\":\"state\",\"pid\":7,\"coro\":3,\"state\":\"exited\",\"tid\":7,"
		 "\"since\":40,\"switches\":0}");
	assert_true(f.has_derived);
	assert_int_equal(f.derived.coro, 3);
	assert_int_equal(f.derived.ts, 40);
	assert_int_equal(f.derived.coro_end.how, CTP_END_UNKNOWN);
	assert_true(f.ev.state.has_switches);
	feed(&f, "{\"type\":\"state\",\"pid\":7,\"coro\":4,\"state\":\"suspended\","
		 "\"wait\":{\"fd\":0,\"op\":\"read\",\"closed\":true}}");
	assert_false(f.has_derived);
	assert_int_equal(f.ev.state.wait_fd, 0);
	assert_int_equal(f.ev.state.wait_op, CTP_OP_READ);
	assert_int_equal(f.ev.state.wait_closed, 1);
	json_decref(f.json);
	ctp_event_decoder_free(&f.d);
}

static void format_2_ends_are_read(void **state)
{
	(void)state;
	struct fed f = {0};
	ctp_event_decoder_init(&f.d);
	feed(&f, "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"start\":1}");
	feed(&f,
	     "{\"type\":\"coro_end\",\"pid\":7,\"coro\":5,\"tid\":8,\"ts\":60,\"how\":\"ended\","
	     "\"switch\":\"ontop_fcontext\"}");
	assert_int_equal(f.ev.type, CTP_EV_CORO_END);
	assert_int_equal(f.ev.coro_end.how, CTP_END_ENDED);
	assert_string_equal(f.ev.coro_end.how_name, "ended");
	assert_int_equal(f.ev.coro_end.switch_how, CTP_HOW_ONTOP_FCONTEXT);
	/* Format 2 says every end itself: nothing is derived. */
	feed(&f, "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":70,\"from\":6,\"to\":1,"
		 "\"how\":\"return\",\"stack\":null}");
	assert_false(f.has_derived);
	/* A word this version does not know is kept as written. */
	feed(&f, "{\"type\":\"coro_end\",\"pid\":7,\"coro\":9,\"how\":\"vanished\"}");
	assert_int_equal(f.ev.coro_end.how, 0);
	assert_string_equal(f.ev.coro_end.how_name, "vanished");
	feed(&f, "{\"type\":\"novel\",\"pid\":7}");
	assert_int_equal(f.ev.type, CTP_EV_UNKNOWN);
	assert_string_equal(f.ev.type_name, "novel");
	json_decref(f.json);
	ctp_event_decoder_free(&f.d);
}

static struct ctp_event switch_event(uint32_t tid, uint64_t ts, uint64_t from, uint64_t to)
{
	struct ctp_event ev = {.type = CTP_EV_SWITCH, .pid = 7, .tid = tid, .ts = ts};
	ev.sw.from = from;
	ev.sw.to = to;
	ev.sw.how_name = "swapcontext";
	return ev;
}

static void runs_close_per_thread(void **state)
{
	(void)state;
	struct ctp_runs r = {0};
	struct ctp_run_step step;
	/* Thread 7's own coroutine 1, made at 5 on thread 7, runs until the first switch. */
	struct ctp_event ev = switch_event(7, 10, 1, 2);
	assert_int_equal(ctp_runs_switch(&r, &ev, 5, 7, &step), 0);
	assert_true(step.new_thread);
	assert_true(step.ended.open && step.ended.initial);
	assert_int_equal(step.ended.start, 5);
	/* Another thread's switch in between does not close thread 7's run. */
	ev = switch_event(8, 12, 3, 4);
	assert_int_equal(ctp_runs_switch(&r, &ev, 0, 0, &step), 0);
	assert_false(step.ended.open);
	ev = switch_event(7, 20, 2, 1);
	assert_int_equal(ctp_runs_switch(&r, &ev, 0, 0, &step), 0);
	assert_false(step.new_thread);
	assert_int_equal(step.ended.coro, 2);
	assert_int_equal(step.ended.start, 10);
	assert_int_equal(step.ended.by, 1);
	assert_false(step.ended.initial);
	size_t ended = 0;
	ctp_runs_end_process(&r, 7, NULL, NULL);
	for (size_t i = 0; i < r.n; i++)
		ended += r.runs[i].pid == 0;
	assert_int_equal(ended, 2);
	ctp_runs_free(&r);
}

/* Feeds one line to the names, as the streaming views do. */
static void see(struct fed *f, struct ctp_cat_names *n, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	feed(f, text);
	assert_int_equal(ctp_cat_names_see(n, &f->ev), 0);
}

static void coro_line(struct fed *f, struct ctp_cat_names *n, unsigned pid, unsigned coro,
		      const char *entry)
{
	see(f, n,
	    "{\"type\":\"coro\",\"pid\":%u,\"coro\":%u,\"kind\":\"ucontext\",\"entry\":\"%s\","
	    "\"entry_addr\":null,\"parent\":null,\"tid\":%u,\"ts\":1,\"stack\":null}",
	    pid, coro, entry, pid);
}

/* The names of a process are forgotten after its exit (at the next event), and their slots go
 * to the processes that follow: each name stays its own coroutine's, whichever process's slots
 * it took, however the exits interleave. */
static void names_outlive_their_processes_slots(void **state)
{
	(void)state;
	struct fed f = {0};
	ctp_event_decoder_init(&f.d);
	struct ctp_cat_names *n = ctp_cat_names_new();
	assert_non_null(n);
	see(&f, n,
	    "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":\"t\","
	    "\"start\":1}");
	enum { PER = 50 };
	char entry[32];
	/* Three rounds: pids 10 and 11 live together, 10 exits, 12 comes, 11 exits, ... */
	for (unsigned round = 0; round < 3; round++) {
		unsigned a = 10 + 2 * round, b = a + 1;
		for (unsigned c = 1; c <= PER; c++) {
			snprintf(entry, sizeof(entry), "a%u_%u", a, c);
			coro_line(&f, n, a, c, entry);
			snprintf(entry, sizeof(entry), "b%u_%u", b, c);
			coro_line(&f, n, b, c, entry);
		}
		see(&f, n, "{\"type\":\"exit\",\"pid\":%u,\"status\":0}", a);
		/* Forgotten at the next event; b's names stay, and b's coroutines made after take
		 * a's slots. */
		coro_line(&f, n, b, PER + 1, "b_late");
		for (unsigned c = 1; c <= PER; c++) {
			assert_null(ctp_cat_names_coro_info(n, a, c));
			snprintf(entry, sizeof(entry), "b%u_%u", b, c);
			assert_string_equal(ctp_cat_names_entry(n, b, c), entry);
		}
		assert_string_equal(ctp_cat_names_entry(n, b, PER + 1), "b_late");
		see(&f, n, "{\"type\":\"exit\",\"pid\":%u,\"status\":0}", b);
		see(&f, n, "{\"type\":\"loss\",\"pid\":%u,\"tid\":%u,\"count\":1}", b + 100,
		    b + 100);
		for (unsigned c = 1; c <= PER + 1; c++)
			assert_null(ctp_cat_names_coro_info(n, b, c));
	}
	/* A new process on the slots of all of them: its names, and only its. */
	for (unsigned c = 1; c <= 3 * PER; c++) {
		snprintf(entry, sizeof(entry), "z_%u", c);
		coro_line(&f, n, 99, c, entry);
	}
	for (unsigned c = 1; c <= 3 * PER; c++) {
		snprintf(entry, sizeof(entry), "z_%u", c);
		assert_string_equal(ctp_cat_names_entry(n, 99, c), entry);
	}
	assert_string_equal(ctp_cat_names_entry(n, 10, 1), "?");
	ctp_cat_names_free(n);
	json_decref(f.json);
	ctp_event_decoder_free(&f.d);
}

/* A counting table's counts: kept across the coroutine's `coro` line whichever comes first, a
 * count for a coroutine never announced that names nothing, none in a plain table, and all
 * forgotten with the process, so that a process given the same pid starts from 0. */
static void counts_live_and_die_with_the_names(void **state)
{
	(void)state;
	struct fed f = {0};
	ctp_event_decoder_init(&f.d);
	struct ctp_cat_names *plain = ctp_cat_names_new();
	struct ctp_cat_names *n = ctp_cat_names_new_counting();
	assert_non_null(plain);
	assert_non_null(n);
	assert_null(ctp_cat_names_count(plain, 7, 1));
	see(&f, n,
	    "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":\"t\","
	    "\"start\":1}");
	coro_line(&f, n, 7, 1, "first");
	for (int i = 0; i < 3; i++)
		(*ctp_cat_names_count(n, 7, 1))++;
	(*ctp_cat_names_count(n, 7, 2))++; /* before its coro line */
	coro_line(&f, n, 7, 2, "second");
	(*ctp_cat_names_count(n, 7, 9))++; /* never announced */
	assert_int_equal(*ctp_cat_names_count(n, 7, 1), 3);
	assert_int_equal(*ctp_cat_names_count(n, 7, 2), 1);
	assert_string_equal(ctp_cat_names_entry(n, 7, 2), "second");
	assert_int_equal(*ctp_cat_names_count(n, 7, 9), 1);
	assert_string_equal(ctp_cat_names_entry(n, 7, 9), "?");
	assert_int_equal(ctp_cat_names_coro_info(n, 7, 9)->entry_addr, 0);
	see(&f, n, "{\"type\":\"exit\",\"pid\":7,\"status\":0}");
	coro_line(&f, n, 7, 1, "reused");
	assert_int_equal(*ctp_cat_names_count(n, 7, 1), 0);
	assert_int_equal(*ctp_cat_names_count(n, 7, 2), 0);
	assert_string_equal(ctp_cat_names_entry(n, 7, 1), "reused");
	ctp_cat_names_free(n);
	ctp_cat_names_free(plain);
	json_decref(f.json);
	ctp_event_decoder_free(&f.d);
}

/* A frame the trace left unnamed is placed in the module whose `module` line of its own process
 * holds it, the latest such line winning: its address less that module's load bias, shown as the
 * module's file name + that offset; a frame no module holds keeps its bare address, and a named
 * frame needs no place. */
static void unnamed_frames_are_placed_in_their_module(void **state)
{
	(void)state;
	struct fed f = {0};
	ctp_event_decoder_init(&f.d);
	struct ctp_resym *r = ctp_resym_attach(&f.d);
	assert_non_null(r);
	struct ctp_cat_names *n = ctp_cat_names_new();
	assert_non_null(n);
	see(&f, n,
	    "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":\"t\","
	    "\"start\":1}");
	const char *module = "{\"type\":\"module\",\"pid\":%u,\"path\":\"%s\",\"build_id\":null,"
			     "\"bias\":\"%s\",\"lo\":\"%s\",\"hi\":\"%s\"}";
	/* Files that are not there: nothing names the frames again. */
	see(&f, n, module, 7, "/nonexistent/libold.so", "0x7f0000000000", "0x7f0000001000",
	    "0x7f0000100000");
	see(&f, n, module, 7, "/nonexistent/libx.so", "0x7f0000000000", "0x7f0000001000",
	    "0x7f0000100000");
	see(&f, n, module, 8, "/nonexistent/liby.so", "0x7f1000000000", "0x7f1000001000",
	    "0x7f1000100000");
	see(&f, n,
	    "{\"type\":\"stack\",\"pid\":7,\"id\":1,\"frames\":["
	    "{\"addr\":\"0x7f0000001234\",\"sym\":null,\"off\":null,\"module\":null,\"file\":null,"
	    "\"line\":null},"
	    "{\"addr\":\"0x7f1000001234\",\"sym\":null,\"off\":null,\"module\":null,\"file\":null,"
	    "\"line\":null},"
	    "{\"addr\":\"0x7f0000002000\",\"sym\":\"known\",\"off\":16,"
	    "\"module\":\"/nonexistent/libx.so\",\"file\":null,\"line\":null}]}");
	const struct ctp_event_frame *fr = f.ev.stack_line.frames;
	assert_true(fr[0].has_module_off);
	assert_int_equal(fr[0].module_off, 0x1234);
	assert_string_equal(fr[0].module, "/nonexistent/libx.so");
	assert_false(fr[1].has_module_off); /* another process's module */
	assert_null(fr[1].module);
	assert_false(fr[2].has_module_off); /* named: nothing to place */
	assert_string_equal(fr[2].sym, "known");
	assert_string_equal(ctp_cat_names_stack_top(n, 7, 1), "libx.so+0x1234");
	char buf[64];
	assert_string_equal(ctp_frame_place(buf, sizeof(buf), fr[1].module, fr[1].has_module_off,
					    fr[1].module_off, fr[1].addr),
			    "0x7f1000001234");
	assert_string_equal(ctp_frame_place(buf, sizeof(buf), "prog", true, 0x10, 0x5000),
			    "prog+0x10");
	ctp_cat_names_free(n);
	ctp_resym_free(r);
	json_decref(f.json);
	ctp_event_decoder_free(&f.d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idmap_puts_gets_and_deletes),
		cmocka_unit_test(idmap_rows_and_slots_agree),
		cmocka_unit_test(format_1_ends_are_derived_once),
		cmocka_unit_test(format_2_ends_are_read),
		cmocka_unit_test(runs_close_per_thread),
		cmocka_unit_test(names_outlive_their_processes_slots),
		cmocka_unit_test(counts_live_and_die_with_the_names),
		cmocka_unit_test(unnamed_frames_are_placed_in_their_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

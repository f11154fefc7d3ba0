/* Switch lines (ctp_emit_switch), nearly every line of a trace: the emitter keeps the start of a
 * line per thread and the rest of it per (from, to, how, stack), and copies those whole. Whatever
 * was kept, each line must read exactly as printf would write it: lines of threads and of
 * processes that share a kept slot, tuples that evict each other, tails too long to keep, ids of
 * every length, a `how` this collector does not know. */
#define _GNU_SOURCE /* memfd_create */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "ctp/emit.h"
#include "ctp/names.h"

/* The trace goes to a memory file: no file to clean up. `keep` stays open to read it back after
 * the writer closed its own descriptor. */
struct trace {
	int keep;
};

static struct ctp_zwriter *open_trace(struct trace *t)
{
	int fd = memfd_create("ctp-emit-switch-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	t->keep = dup(fd);
	assert_true(t->keep >= 0);
	struct ctp_zwriter *z = ctp_zwriter_open_fd(fd, "memfd:ctp-emit-switch-test", 1);
	assert_non_null(z);
	return z;
}

/* The trace's text, all frames decoded; *n its length. */
static char *read_text(struct trace *t, size_t *n, size_t most)
{
	off_t len = lseek(t->keep, 0, SEEK_END);
	assert_true(len > 0);
	char *z = malloc((size_t)len);
	assert_non_null(z);
	assert_int_equal(pread(t->keep, z, (size_t)len, 0), len);
	close(t->keep);
	char *text = malloc(most);
	assert_non_null(text);
	size_t got = ZSTD_decompress(text, most, z, (size_t)len);
	assert_false(ZSTD_isError(got));
	free(z);
	*n = got;
	return text;
}

/* xorshift64*: the same sequence on every run. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/* An id of 1 to 20 digits, 0 (none) now and then. */
static uint64_t any_id(uint64_t *s)
{
	uint64_t r = next(s);
	if (r % 16 == 0)
		return 0;
	return next(s) >> (r >> 58);
}

static void test_lines_as_printf_writes_them(void **state)
{
	(void)state;
	enum { LINES = 200000, POOL = 300 };
	/* A pool of tuples larger than the kept tails, drawn from unevenly, as a program's
	 * coroutines switch: the same few most of the time. Most are one of a few tuples with a
	 * single value changed (a scheduler that resumes many coroutines from one call site), so
	 * that tuples a value apart meet in one kept slot; the rest are any ids. */
	struct {
		uint64_t from, to;
		uint32_t how, stack;
	} pool[POOL];
	uint64_t s = 0x243F6A8885A308D3ull;
	for (size_t i = 0; i < POOL; i++) {
		bool related = i < 2 * POOL / 3;
		size_t base = i % 4;
		pool[i].from = related ? 1 + base : any_id(&s);
		pool[i].to = related ? 5 + base : any_id(&s);
		/* Every `how`, and past the last (null). */
		pool[i].how = related ? CTP_HOW_SWAPCONTEXT
				      : (uint32_t)(next(&s) % (CTP_EMIT_HOW_COUNT + 2));
		pool[i].stack = related ? (uint32_t)base : (uint32_t)any_id(&s);
		if (!related)
			continue;
		uint64_t v = next(&s) % 2000;
		switch (i / 4 % 4) {
		case 0:
			pool[i].from = v;
			break;
		case 1:
			pool[i].to = v;
			break;
		case 2:
			pool[i].how = (uint32_t)(v % (CTP_EMIT_HOW_COUNT + 2));
			break;
		case 3:
			pool[i].stack = (uint32_t)v;
			break;
		}
	}
	struct trace trace;
	struct ctp_zwriter *z = open_trace(&trace);
	struct ctp_emitter e;
	ctp_emit_init(&e, z);
	size_t cap = (size_t)LINES * 200;
	char *want = malloc(cap);
	assert_non_null(want);
	size_t at = 0;
	uint64_t ts = 1700000000000000000ull;
	for (size_t i = 0; i < LINES; i++) {
		uint64_t r = next(&s);
		size_t k = (r & 3) ? (r >> 8) % 8 : (r >> 8) % POOL;
		/* Two processes, threads whose ids share a kept head. */
		uint32_t pid = 100 + (uint32_t)(r >> 40) % 2;
		uint32_t tid = 7 + 16 * (uint32_t)((r >> 44) % 3);
		ts += (r >> 50) * 1000; /* its digits above the last eight change now and then */
		if (i % 50000 == 0)
			ts = ts / 7 + (r >> 60); /* and fewer digits */
		ctp_emit_switch(&e, pid, tid, ts, pool[k].from, pool[k].to, pool[k].how,
				pool[k].stack);
		const char *how = ctp_name_of(&ctp_switch_how_names,
					      pool[k].how < CTP_EMIT_HOW_COUNT ? pool[k].how : 0);
		char how_json[40] = "null";
		if (how)
			snprintf(how_json, sizeof(how_json), "\"%s\"", how);
		char stack[16] = "null";
		if (pool[k].stack)
			snprintf(stack, sizeof(stack), "%u", pool[k].stack);
		at += (size_t)snprintf(want + at, cap - at,
				       "{\"type\":\"switch\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,"
				       "\"from\":%llu,\"to\":%llu,\"how\":%s,\"stack\":%s}\n",
				       pid, tid, (unsigned long long)ts,
				       (unsigned long long)pool[k].from,
				       (unsigned long long)pool[k].to, how_json, stack);
	}
	assert_int_equal(e.switches, LINES);
	assert_true(ctp_zwriter_close(z, NULL));
	size_t n;
	char *got = read_text(&trace, &n, cap);
	/* The first line that differs, if any, in full. */
	size_t same = 0;
	while (same < n && same < at && got[same] == want[same])
		same++;
	if (same < n || same < at) {
		size_t line = same;
		while (line > 0 && want[line - 1] != '\n')
			line--;
		fail_msg("lines differ at byte %zu: wrote\n%.200s\nwanted\n%.200s", same,
			 got + line, want + line);
	}
	free(got);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_as_printf_writes_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

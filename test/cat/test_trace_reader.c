/* The reading side of the trace format: zstd frames as a stream (cat/reader/zreader.c) and lines
 * out of them (cat/reader/trace_reader.c). Traces are made here with the zstd library, one frame
 * per group of lines as the collector writes them, then read whole, cut at every byte, damaged,
 * and wrong. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <cmocka.h>

#include "cat/reader/json_count.h"
#include "cat/reader/trace_reader.h"
#include "cat/reader/zreader.h"

#define HEADER "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":1,\"tool\":\"ctp test\"}"
#define MAX_FRAMES 64
#define MAX_LINES 4096

/* A compressed trace and what it holds. */
struct trace {
	char *z;
	size_t zlen;
	size_t frame_end[MAX_FRAMES];	     /* compressed offset after frame i */
	size_t lines_before[MAX_FRAMES + 1]; /* lines in frames [0, i) */
	int frames;
	char *lines[MAX_LINES];
	int nlines;
	char *plain; /* every line, '\n'-terminated */
	size_t plain_len;
};

static void add_bytes(char **buf, size_t *len, const void *p, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	assert_non_null(*buf);
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* Adds one frame holding `text` (whole lines, each ending in '\n'). */
static void add_frame(struct trace *t, const char *text, size_t len, int level)
{
	assert_true(t->frames < MAX_FRAMES);
	size_t bound = ZSTD_compressBound(len);
	char *frame = malloc(bound);
	assert_non_null(frame);
	size_t n = ZSTD_compress(frame, bound, text, len, level);
	assert_false(ZSTD_isError(n));
	add_bytes(&t->z, &t->zlen, frame, n);
	free(frame);
	t->lines_before[t->frames] = t->nlines;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', text + len - p);
		assert_non_null(nl);
		assert_true(t->nlines < MAX_LINES);
		t->lines[t->nlines++] = strndup(p, nl - p);
		p = nl + 1;
	}
	add_bytes(&t->plain, &t->plain_len, text, len);
	t->frame_end[t->frames++] = t->zlen;
	t->lines_before[t->frames] = t->nlines;
}

static void trace_free(struct trace *t)
{
	for (int i = 0; i < t->nlines; i++)
		free(t->lines[i]);
	free(t->z);
	free(t->plain);
}

/* A small trace: the header, then `frames` frames of a few switch lines each. */
static void make_small_trace(struct trace *t, int frames)
{
	memset(t, 0, sizeof(*t));
	add_frame(t, HEADER "\n", strlen(HEADER) + 1, 1);
	for (int f = 1; f < frames; f++) {
		char text[1024];
		size_t len = 0;
		for (int i = 0; i < 1 + f % 4; i++)
			len += snprintf(text + len, sizeof(text) - len,
					"{\"type\":\"switch\",\"pid\":42,\"ts\":%d,\"from\":%d,"
					"\"to\":%d}\n",
					f * 100 + i, i, f);
		add_frame(t, text, len, 1);
	}
}

/* An fd that reads back `n` bytes of `p`. */
static int fd_with(const void *p, size_t n)
{
	int fd = memfd_create("trace", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static void test_zreader_multi_frame(void **state)
{
	(void)state;
	struct trace t;
	make_small_trace(&t, 12);
	int fd = fd_with(t.z, t.zlen);
	struct ctp_zreader *zr = ctp_zreader_new(fd);
	assert_non_null(zr);
	/* A tiny output buffer makes zstd hold data back between calls: all of it must come out. */
	char *out = NULL;
	size_t out_len = 0;
	char buf[7];
	size_t n;
	while ((n = ctp_zreader_read(zr, buf, sizeof(buf))) > 0)
		add_bytes(&out, &out_len, buf, n);
	assert_int_equal(ctp_zreader_status(zr), CTP_ZREADER_OK);
	assert_int_equal(out_len, t.plain_len);
	assert_memory_equal(out, t.plain, t.plain_len);
	assert_int_equal(ctp_zreader_frames(zr), 12);
	assert_int_equal(ctp_zreader_frame_end(zr), t.zlen);
	assert_int_equal(ctp_zreader_input_bytes(zr), t.zlen);
	assert_int_equal(ctp_zreader_read(zr, buf, sizeof(buf)), 0);
	ctp_zreader_free(zr);
	close(fd);
	free(out);
	trace_free(&t);
}

static void test_reader_all_lines_in_order(void **state)
{
	(void)state;
	struct trace t;
	make_small_trace(&t, 12);
	int fd = fd_with(t.z, t.zlen);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	int i = 0;
	while (ctp_trace_reader_next(r, &line) == CTP_TRACE_LINE) {
		assert_true(i < t.nlines);
		assert_int_equal(line.number, i + 1);
		assert_int_equal(line.len, strlen(t.lines[i]));
		assert_memory_equal(line.text, t.lines[i], line.len);
		/* Parsed one way or the other, and the same object either way. */
		assert_true((line.json != NULL) != (line.flat != NULL));
		json_t *obj = ctp_trace_line_json(&line);
		assert_true(json_is_object(obj));
		json_decref(obj);
		i++;
	}
	assert_int_equal(i, t.nlines);
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	assert_int_equal(end->kind, CTP_TRACE_COMPLETE);
	assert_int_equal(end->lines, t.nlines);
	assert_int_equal(end->bad_lines, 0);
	assert_int_equal(end->frame_end, t.zlen);
	json_t *header = ctp_trace_reader_header(r);
	assert_string_equal(json_string_value(json_object_get(header, "tool")), "ctp test");
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_END);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* Reads the first `cut` bytes of `t` and checks what a cut trace must give: only whole lines, in
 * order, every line of every whole frame, and the cut told right. */
static void check_cut(const struct trace *t, size_t cut)
{
	int fd = fd_with(t->z, cut);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	int i = 0;
	enum ctp_trace_item item;
	while ((item = ctp_trace_reader_next(r, &line)) == CTP_TRACE_LINE) {
		assert_true(i < t->nlines);
		assert_int_equal(line.len, strlen(t->lines[i]));
		assert_memory_equal(line.text, t->lines[i], line.len);
		i++;
	}
	assert_int_equal(item, CTP_TRACE_END);
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	size_t whole = 0; /* frames that end before the cut */
	while ((int)whole < t->frames && t->frame_end[whole] <= cut)
		whole++;
	size_t frame_end = whole ? t->frame_end[whole - 1] : 0;
	assert_true(i >= (int)t->lines_before[whole]);
	assert_int_equal(end->lines, i);
	assert_int_equal(end->frame_end, frame_end);
	assert_int_equal(end->input_bytes, cut);
	if (cut == 0) {
		assert_int_equal(end->kind, CTP_TRACE_NOT_TRACE);
		assert_string_equal(end->why, "empty file");
	} else if (i == 0) {
		/* zstd, but not even the header whole: nothing says it is a trace. */
		assert_int_equal(end->kind, CTP_TRACE_NOT_TRACE);
		assert_non_null(strstr(end->why, "before its first line was complete"));
	} else if (cut == frame_end) {
		assert_int_equal(end->kind, CTP_TRACE_COMPLETE);
		assert_int_equal(i, t->lines_before[whole]);
	} else {
		assert_int_equal(end->kind, CTP_TRACE_TRUNCATED);
	}
	ctp_trace_reader_free(r);
	close(fd);
}

static void test_reader_cut_at_every_byte(void **state)
{
	(void)state;
	struct trace t;
	make_small_trace(&t, 10);
	for (size_t cut = 0; cut <= t.zlen; cut++)
		check_cut(&t, cut);
	trace_free(&t);
}

/* Lines whose bytes do not repeat much, so that a frame holds several compressed blocks. */
static size_t noisy_lines(char *text, size_t cap, int count, unsigned seed)
{
	size_t len = 0;
	for (int i = 0; i < count; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned a = seed;
		seed = seed * 1103515245u + 12345u;
		len += snprintf(text + len, cap - len,
				"{\"type\":\"switch\",\"pid\":7,\"ts\":%u,\"from\":%u,\"to\":%u,"
				"\"how\":\"jump_fcontext\"}\n",
				a, seed % 100000, (a ^ seed) % 100000);
	}
	return len;
}

/* A cut inside a big frame still gives the lines of the blocks decoded before the cut. */
static void test_reader_partial_frame_lines(void **state)
{
	(void)state;
	struct trace t;
	memset(&t, 0, sizeof(t));
	add_frame(&t, HEADER "\n", strlen(HEADER) + 1, 1);
	size_t cap = 1 << 20;
	char *text = malloc(cap);
	size_t len = noisy_lines(text, cap, 4000, 1); /* ~400 KiB: several 128 KiB blocks */
	add_frame(&t, text, len, 1);
	free(text);
	size_t cut = t.frame_end[0] + (t.frame_end[1] - t.frame_end[0]) * 3 / 4;
	int fd = fd_with(t.z, cut);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	int i = 0;
	while (ctp_trace_reader_next(r, &line) == CTP_TRACE_LINE) {
		assert_memory_equal(line.text, t.lines[i], strlen(t.lines[i]));
		i++;
	}
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	assert_int_equal(end->kind, CTP_TRACE_TRUNCATED);
	assert_int_equal(end->frame_end, t.frame_end[0]);
	assert_true(i > 1000); /* the first blocks of the cut frame */
	assert_true(i < t.nlines);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* Reads `n` bytes of `p` to the end and returns how it ended (the reader stays open for more
 * checks, freed by the caller). */
static struct ctp_trace_reader *read_all(const void *p, size_t n, int *fd, int *good, int *bad)
{
	*fd = fd_with(p, n);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(*fd);
	struct ctp_trace_line line;
	enum ctp_trace_item item;
	*good = *bad = 0;
	while ((item = ctp_trace_reader_next(r, &line)) != CTP_TRACE_END) {
		if (item == CTP_TRACE_LINE)
			++*good;
		else
			++*bad;
	}
	return r;
}

static void expect_not_trace(const void *p, size_t n, const char *why_part)
{
	int fd, good, bad;
	struct ctp_trace_reader *r = read_all(p, n, &fd, &good, &bad);
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	assert_int_equal(good, 0);
	assert_int_equal(end->kind, CTP_TRACE_NOT_TRACE);
	if (!strstr(end->why, why_part))
		fail_msg("why is \"%s\", expected \"%s\" in it", end->why, why_part);
	ctp_trace_reader_free(r);
	close(fd);
}

static void expect_not_trace_z(const char *text, const char *why_part)
{
	struct trace t;
	memset(&t, 0, sizeof(t));
	add_frame(&t, text, strlen(text), 1);
	expect_not_trace(t.z, t.zlen, why_part);
	trace_free(&t);
}

static void test_reader_not_zstd(void **state)
{
	(void)state;
	const char *text = HEADER "\n";
	expect_not_trace(text, strlen(text), "not zstd-compressed");
	expect_not_trace("ab", 2, "not zstd-compressed");
	expect_not_trace("\x28\xb5\x2f\xfc", 4, "not zstd-compressed");
	expect_not_trace("", 0, "empty file");

	/* The first bytes of a real frame: zstd, cut before any line was whole. */
	expect_not_trace("\x28\xb5", 2, "cut off before its first line was complete");
	expect_not_trace("\x28\xb5\x2f\xfd", 4, "cut off before its first line was complete");
	struct trace t;
	memset(&t, 0, sizeof(t));
	add_frame(&t, HEADER "\n", strlen(HEADER) + 1, 1);
	expect_not_trace(t.z, t.zlen - 1, "cut off before its first line was complete");
	trace_free(&t);
}

static void test_reader_not_a_trace_header(void **state)
{
	(void)state;
	expect_not_trace_z("{\"a\":1}\n" HEADER "\n", "\"type\":\"trace\"");
	expect_not_trace_z("hello\n", "first line is not JSON");
	expect_not_trace_z("[1,2]\n", "not a JSON object");
	expect_not_trace_z("{\"type\":\"trace\",\"format\":\"other\",\"version\":1}\n", "format");
	expect_not_trace_z("{\"type\":\"trace\",\"format\":\"ctp-trace\"}\n", "version");
	expect_not_trace_z("{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":99}\n",
			   "version 99");
	expect_not_trace_z("", "no lines");
}

static void test_reader_bad_lines_skipped(void **state)
{
	(void)state;
	struct trace t;
	memset(&t, 0, sizeof(t));
	const char *text = HEADER "\n{\"type\":\"loss\"}\n{broken\n\n[1]\n{\"type\":\"exit\"}\n";
	add_frame(&t, text, strlen(text), 1);
	int fd = fd_with(t.z, t.zlen);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	static const enum ctp_trace_item expect[] = {
		CTP_TRACE_LINE,	    CTP_TRACE_LINE, CTP_TRACE_BAD_LINE, CTP_TRACE_BAD_LINE,
		CTP_TRACE_BAD_LINE, CTP_TRACE_LINE, CTP_TRACE_END,
	};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		assert_int_equal(ctp_trace_reader_next(r, &line), expect[i]);
		if (expect[i] == CTP_TRACE_END)
			break;
		assert_int_equal(line.number, i + 1);
		if (expect[i] == CTP_TRACE_BAD_LINE) {
			assert_null(line.json);
			assert_non_null(line.error);
		}
		if (i == 4)
			assert_string_equal(line.error, "not a JSON object");
	}
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	assert_int_equal(end->kind, CTP_TRACE_COMPLETE);
	assert_int_equal(end->lines, 6);
	assert_int_equal(end->bad_lines, 3);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* Lines longer than a chunk are put together; lines over the limit are skipped, not kept. */
static void test_reader_long_lines(void **state)
{
	(void)state;
	struct trace t;
	memset(&t, 0, sizeof(t));
	size_t big = 300 << 10;
	char *text = malloc(big + 4096);
	size_t len = snprintf(text, 4096, "%s\n{\"type\":\"process\",\"exe\":\"", HEADER);
	memset(text + len, 'x', big);
	len += big;
	len += snprintf(text + len, 4096, "\"}\n{\"type\":\"exit\",\"pid\":1}\n");
	add_frame(&t, text, len, 1);
	free(text);

	int fd = fd_with(t.z, t.zlen);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(line.len, strlen(t.lines[1]));
	assert_memory_equal(line.text, t.lines[1], line.len);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	json_t *obj = ctp_trace_line_json(&line);
	assert_string_equal(json_string_value(json_object_get(obj, "type")), "exit");
	json_decref(obj);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_END);
	ctp_trace_reader_free(r);
	close(fd);

	fd = fd_with(t.z, t.zlen);
	r = ctp_trace_reader_from_fd(fd);
	ctp_trace_reader_set_line_limit(r, 64 << 10);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_BAD_LINE);
	assert_int_equal(line.number, 2);
	assert_non_null(strstr(line.error, "longer than 65536 bytes"));
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(line.number, 3);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_END);
	assert_int_equal(ctp_trace_reader_end(r)->kind, CTP_TRACE_COMPLETE);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* Bytes after the last frame that are no frame: the whole frames are read, the damage told. */
static void test_reader_garbage_after_frames(void **state)
{
	(void)state;
	struct trace t;
	make_small_trace(&t, 4);
	size_t good_len = t.zlen;
	add_bytes(&t.z, &t.zlen, "garbage!", 8);
	int fd, good, bad;
	struct ctp_trace_reader *r = read_all(t.z, t.zlen, &fd, &good, &bad);
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	assert_int_equal(end->kind, CTP_TRACE_CORRUPT);
	assert_int_equal(end->frame_end, good_len);
	assert_int_equal(good, t.nlines);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* A whole trace whose last line lacks its '\n' still gives that line. */
static void test_reader_unterminated_last_line(void **state)
{
	(void)state;
	struct trace t;
	memset(&t, 0, sizeof(t));
	const char *text = HEADER "\n{\"type\":\"exit\",\"pid\":3}";
	size_t zcap = ZSTD_compressBound(strlen(text));
	t.z = malloc(zcap);
	t.zlen = ZSTD_compress(t.z, zcap, text, strlen(text), 1);
	int fd, good, bad;
	struct ctp_trace_reader *r = read_all(t.z, t.zlen, &fd, &good, &bad);
	assert_int_equal(good, 2);
	assert_int_equal(ctp_trace_reader_end(r)->kind, CTP_TRACE_COMPLETE);
	ctp_trace_reader_free(r);
	close(fd);
	free(t.z);
}

/* Reads a one-frame trace of `text` to its end; `good` and `bad` count lines. */
static struct ctp_trace_reader *read_text(const char *text, int *fd, int *good, int *bad,
					  struct trace *t)
{
	memset(t, 0, sizeof(*t));
	add_frame(t, text, strlen(text), 1);
	return read_all(t->z, t->zlen, fd, good, bad);
}

#define SWITCH "{\"type\":\"switch\",\"pid\":1}\n"

/* The `end` line is checked against the lines read: a collector that could not write some
 * (`unwritten`), frames that went missing (fewer lines than `lines`), lines spliced in. */
static void test_reader_end_line_counts(void **state)
{
	(void)state;
	static const struct {
		const char *end;
		bool end_has_lines;
		uint64_t missing, uncounted;
	} cases[] = {
		{"{\"type\":\"end\",\"lines\":3,\"lost\":0}\n", true, 0, 0},
		{"{\"type\":\"end\",\"lines\":3,\"lost\":0,\"unwritten\":7}\n", true, 7, 0},
		{"{\"type\":\"end\",\"lines\":5,\"lost\":0}\n", true, 2, 0},
		{"{\"type\":\"end\",\"lines\":5,\"lost\":0,\"unwritten\":7}\n", true, 9, 0},
		{"{\"type\":\"end\",\"lines\":2,\"lost\":0}\n", true, 0, 1},
		{"{\"type\":\"end\"}\n", false, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "%s\n%s%s%s", HEADER, SWITCH, SWITCH, cases[i].end);
		struct trace t;
		int fd, good, bad;
		struct ctp_trace_reader *r = read_text(text, &fd, &good, &bad, &t);
		const struct ctp_trace_end *end = ctp_trace_reader_end(r);
		assert_int_equal(end->kind, CTP_TRACE_COMPLETE);
		assert_true(end->end_line);
		assert_int_equal(end->lines_before_end, 3);
		assert_int_equal(end->end_has_lines, cases[i].end_has_lines);
		assert_int_equal(ctp_trace_end_missing(end), cases[i].missing);
		assert_int_equal(ctp_trace_end_uncounted(end), cases[i].uncounted);
		ctp_trace_reader_free(r);
		close(fd);
		trace_free(&t);
	}
	/* Without an end line nothing is counted as missing: the kind of end says enough. */
	struct trace t;
	int fd, good, bad;
	struct ctp_trace_reader *r = read_text(HEADER "\n" SWITCH, &fd, &good, &bad, &t);
	assert_false(ctp_trace_reader_end(r)->end_line);
	assert_int_equal(ctp_trace_end_missing(ctp_trace_reader_end(r)), 0);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

/* The end line is the last: more after it, or a second header (two traces concatenated), ends
 * reading there, and those lines are neither yielded nor counted. */
static void test_reader_after_end(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int good;
		const char *why;
	} cases[] = {
		{HEADER "\n" SWITCH "{\"type\":\"end\",\"lines\":2}\n" SWITCH, 3,
		 "follows the end line"},
		{HEADER "\n" SWITCH "{\"type\":\"end\",\"lines\":2}\nnot json\n", 3,
		 "follows the end line"},
		{HEADER "\n" SWITCH "{\"type\":\"end\",\"lines\":2}\n" HEADER "\n" SWITCH, 3,
		 "follows the end line"},
		{HEADER "\n" SWITCH HEADER "\n" SWITCH, 2, "a second trace header at line 3"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace t;
		int fd, good, bad;
		struct ctp_trace_reader *r = read_text(cases[i].text, &fd, &good, &bad, &t);
		const struct ctp_trace_end *end = ctp_trace_reader_end(r);
		assert_int_equal(end->kind, CTP_TRACE_TRAILING);
		assert_int_equal(good, cases[i].good);
		assert_int_equal(bad, 0);
		assert_int_equal(end->lines, cases[i].good);
		if (!strstr(end->why, cases[i].why))
			fail_msg("why is \"%s\", expected \"%s\" in it", end->why, cases[i].why);
		ctp_trace_reader_free(r);
		close(fd);
		trace_free(&t);
	}
}

static uint64_t count(const char *json)
{
	return ctp_json_count_values(json, strlen(json), 1000);
}

static void test_json_count_values(void **state)
{
	(void)state;
	assert_int_equal(count("{}"), 1);
	assert_int_equal(count("[[],[],[]]"), 4);
	assert_int_equal(count("{\"a\":1,\"b\":[true,null,-2.5e3]}"), 8);
	assert_int_equal(count("[\"x,[]\\\"{\",1]"), 3); /* brackets in strings do not count */
	assert_int_equal(count(" [ 1 , 22 , 333 ] "), 4);
	assert_int_equal(ctp_json_count_values("[1,1,1,1,1,1]", 13, 3), 4); /* stops early */
	assert_true(ctp_json_max_values(13) >= 7);
}

/* A line with more values than the bound is skipped without being parsed; the next is read. */
static void test_reader_value_limit(void **state)
{
	(void)state;
	size_t n = CTP_TRACE_READER_VALUE_LIMIT + 10;
	size_t cap = strlen(HEADER) + 3 * n + 256;
	char *text = malloc(cap);
	size_t len = (size_t)snprintf(text, cap, "%s\n{\"type\":\"x\",\"v\":[", HEADER);
	for (size_t i = 0; i < n; i++) {
		memcpy(text + len, i ? ",[]" : "[]", i ? 3 : 2);
		len += i ? 3 : 2;
	}
	len += (size_t)snprintf(text + len, cap - len, "]}\n{\"type\":\"exit\",\"pid\":1}\n");
	struct trace t;
	memset(&t, 0, sizeof(t));
	add_frame(&t, text, len, 1);
	free(text);

	int fd = fd_with(t.z, t.zlen);
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	struct ctp_trace_line line;
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_BAD_LINE);
	assert_int_equal(line.number, 2);
	assert_non_null(strstr(line.error, "more than 262144 JSON values"));
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(line.number, 3);
	ctp_trace_reader_free(r);
	close(fd);

	/* Under a bound above its count the same line parses. */
	fd = fd_with(t.z, t.zlen);
	r = ctp_trace_reader_from_fd(fd);
	ctp_trace_reader_set_value_limit(r, n + 10);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(ctp_trace_reader_next(r, &line), CTP_TRACE_LINE);
	assert_int_equal(json_array_size(json_object_get(line.json, "v")), n);
	ctp_trace_reader_free(r);
	close(fd);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zreader_multi_frame),
		cmocka_unit_test(test_reader_all_lines_in_order),
		cmocka_unit_test(test_reader_cut_at_every_byte),
		cmocka_unit_test(test_reader_partial_frame_lines),
		cmocka_unit_test(test_reader_not_zstd),
		cmocka_unit_test(test_reader_not_a_trace_header),
		cmocka_unit_test(test_reader_bad_lines_skipped),
		cmocka_unit_test(test_reader_long_lines),
		cmocka_unit_test(test_reader_garbage_after_frames),
		cmocka_unit_test(test_reader_unterminated_last_line),
		cmocka_unit_test(test_reader_end_line_counts),
		cmocka_unit_test(test_reader_after_end),
		cmocka_unit_test(test_json_count_values),
		cmocka_unit_test(test_reader_value_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

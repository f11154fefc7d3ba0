/* The zstd frame writer: every frame decodes on its own (so a trace cut after any frame is
 * readable), frames hold whole lines, lines are counted, and a write error is reported while
 * what was written before stays a readable sequence of whole frames. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "ctp/zwriter.h"

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/ctp-zwriter-test.XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	/* The writer kept the empty file mkstemp made as FILE.old, as it keeps any it replaces. */
	char old[sizeof(path) + 4];
	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
	return 0;
}

static uint8_t *read_file(size_t *n)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* Decodes every frame of the file on its own, checks that each holds whole lines, and returns
 * the concatenated text (NUL-terminated) and the number of frames. */
static char *decode_frames_alone(size_t *frames)
{
	size_t n;
	uint8_t *file = read_file(&n);
	size_t off = 0, out_len = 0;
	char *out = malloc(1);
	*frames = 0;
	while (off < n) {
		size_t fsz = ZSTD_findFrameCompressedSize(file + off, n - off);
		assert_false(ZSTD_isError(fsz));
		unsigned long long content = ZSTD_getFrameContentSize(file + off, fsz);
		assert_true(content != ZSTD_CONTENTSIZE_ERROR);
		size_t cap = content == ZSTD_CONTENTSIZE_UNKNOWN ? (4u << 20) : (size_t)content;
		char *text = malloc(cap + 1);
		size_t got = ZSTD_decompress(text, cap, file + off, fsz);
		assert_false(ZSTD_isError(got));
		assert_true(got > 0);
		assert_int_equal(text[got - 1], '\n'); /* whole lines only */
		out = realloc(out, out_len + got + 1);
		memcpy(out + out_len, text, got);
		out_len += got;
		free(text);
		off += fsz;
		(*frames)++;
	}
	out[out_len] = '\0';
	free(file);
	return out;
}

static void line(char *buf, size_t cap, int i)
{
	snprintf(buf, cap, "{\"type\":\"switch\",\"n\":%d,\"pad\":\"%0*d\"}\n", i, 40, i);
}

static void test_frames_decode_alone(void **state)
{
	(void)state;
	struct ctp_zwriter *z = ctp_zwriter_open(path, 1);
	assert_non_null(z);
	size_t want_cap = 1 << 20, want_len = 0;
	char *want = malloc(want_cap);
	char buf[128];
	/* Three explicit frames, then enough lines to close frames by size. */
	for (int i = 0; i < 30000; i++) {
		line(buf, sizeof(buf), i);
		size_t len = strlen(buf);
		ctp_zwriter_write(z, buf, len);
		if (want_len + len + 1 > want_cap)
			want = realloc(want, want_cap *= 2);
		memcpy(want + want_len, buf, len);
		want_len += len;
		if (i == 0 || i == 1 || i == 100)
			ctp_zwriter_flush(z);
	}
	want[want_len] = '\0';
	struct ctp_zwriter_stats st;
	assert_true(ctp_zwriter_close(z, &st));
	assert_int_equal(st.lines, 30000);
	assert_int_equal(st.raw_bytes, want_len);
	assert_int_equal(st.lost_lines, 0);
	assert_int_equal(st.error, 0);

	size_t frames;
	char *got = decode_frames_alone(&frames);
	assert_int_equal(frames, st.frames);
	assert_true(frames >= 5); /* 3 flushed + at least 2 by size (30000 * ~70 bytes) */
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* Writes 5 MiB of switch-like lines as fast as it can, then one small frame; returns the file's
 * size and the writer's stats. */
static size_t write_fast(int level, struct ctp_zwriter_stats *st)
{
	struct ctp_zwriter *z = ctp_zwriter_open(path, level);
	assert_non_null(z);
	char buf[128];
	for (int i = 0; i < 75000; i++) {
		line(buf, sizeof(buf), i);
		ctp_zwriter_write_line(z, buf, strlen(buf));
	}
	ctp_zwriter_flush(z);
	ctp_zwriter_write_line(z, "{\"last\":1}\n", 11);
	assert_true(ctp_zwriter_close(z, st));
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	size_t frames;
	free(decode_frames_alone(&frames));
	assert_int_equal(frames, st->frames);
	return (size_t)sb.st_size;
}

/* Level auto compresses the frames of a fast writer at the busy level (bigger, faster), every
 * frame of it but the small ones; a fixed level never changes. */
static void test_auto_level_busy_frames(void **state)
{
	(void)state;
	struct ctp_zwriter_stats fixed, autol;
	size_t fixed_size = write_fast(1, &fixed);
	size_t auto_size = write_fast(CTP_ZWRITER_LEVEL_AUTO, &autol);
	assert_int_equal(fixed.busy_frames, 0);
	assert_int_equal(autol.lines, 75001);
	assert_int_equal(autol.frames, fixed.frames);
	/* Every frame closed by size is busy, and the rest when it is big enough; the small last
	 * one is not. */
	assert_true(autol.frames >= 6);
	assert_true(autol.busy_frames >= autol.frames - 2);
	assert_true(autol.busy_frames <= autol.frames - 1);
	assert_true(auto_size > fixed_size);
}

static void test_write_error_keeps_earlier_frames(void **state)
{
	(void)state;
	/* A file size limit makes the disk "full" after 64 KiB. */
	struct rlimit old, lim;
	getrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_IGN);
	struct ctp_zwriter *z = ctp_zwriter_open(path, 1);
	assert_non_null(z);
	lim = old;
	lim.rlim_cur = 64 << 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	char buf[128];
	ctp_zwriter_write(z, "{\"first\":1}\n", 12);
	ctp_zwriter_flush(z);
	ctp_zwriter_write(z, "{\"second\":2}\n", 13);
	ctp_zwriter_flush(z);
	/* Lines that do not compress: one frame far over the limit. */
	srand(1);
	int big_lines = 0;
	for (int i = 0; i < 4000; i++) {
		snprintf(buf, sizeof(buf), "{\"r\":\"%08x%08x%08x%08x\"}\n", rand(), rand(), rand(),
			 rand());
		ctp_zwriter_write(z, buf, strlen(buf));
		big_lines++;
	}
	ctp_zwriter_flush(z);
	struct ctp_zwriter_stats st;
	ctp_zwriter_stats(z, &st);
	assert_int_not_equal(st.error, 0); /* EFBIG, reported (once, on stderr) */
	assert_int_equal(st.lost_lines, big_lines);
	assert_int_equal(st.lines, 2 + big_lines);
	/* Writing goes on: a small frame after the error fits again. */
	ctp_zwriter_write(z, "{\"third\":3}\n", 12);
	bool ok = ctp_zwriter_close(z, &st);
	setrlimit(RLIMIT_FSIZE, &old);
	assert_false(ok); /* the error is the close's verdict too */

	size_t frames;
	char *got = decode_frames_alone(&frames);
	assert_string_equal(got, "{\"first\":1}\n{\"second\":2}\n{\"third\":3}\n");
	assert_int_equal(frames, 3);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frames_decode_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_level_busy_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error_keeps_earlier_frames, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

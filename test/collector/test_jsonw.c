/* The JSON line writer: every string a traced process hands us (paths, argv, symbols) must come
 * out as valid JSON, and integers must be exact at their extremes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctp/jsonw.h"

/* What the writer produced, as a NUL-terminated string (valid until the next call). */
static const char *text(struct ctp_jsonw *w)
{
	ctp_jsonw_reserve(w, 1);
	w->buf[w->len] = '\0';
	return w->buf;
}

static void expect_strn(const char *in, size_t n, const char *want)
{
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	ctp_jsonw_strn(&w, in, n);
	assert_string_equal(text(&w), want);
	ctp_jsonw_free(&w);
}

#define EXPECT_STR(lit, want) expect_strn((lit), sizeof(lit) - 1, (want))

static void test_quotes_and_backslash(void **state)
{
	(void)state;
	EXPECT_STR("plain", "\"plain\"");
	EXPECT_STR("a\"b", "\"a\\\"b\"");
	EXPECT_STR("a\\b", "\"a\\\\b\"");
	EXPECT_STR("\\\"", "\"\\\\\\\"\"");
	EXPECT_STR("operator\"\"_x", "\"operator\\\"\\\"_x\"");
	EXPECT_STR("", "\"\"");
}

static void test_control_chars(void **state)
{
	(void)state;
	EXPECT_STR("\n\t\r", "\"\\n\\t\\r\"");
	EXPECT_STR("\x01\x1f\b\f", "\"\\u0001\\u001f\\u0008\\u000c\"");
	/* A NUL inside a counted string is data, not the end. */
	EXPECT_STR("a\0b", "\"a\\u0000b\"");
	/* DEL needs no escape in JSON. */
	EXPECT_STR("\x7f", "\"\x7f\"");
}

static void test_valid_utf8_passes(void **state)
{
	(void)state;
	EXPECT_STR("\xc3\xa9", "\"\xc3\xa9\"");			/* U+00E9 */
	EXPECT_STR("\xe2\x82\xac", "\"\xe2\x82\xac\"");		/* U+20AC */
	EXPECT_STR("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""); /* U+1F600 */
	EXPECT_STR("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF, the last */
}

static void test_invalid_utf8_replaced(void **state)
{
	(void)state;
	/* Each byte that starts no valid sequence becomes U+FFFD; the rest go on. */
	EXPECT_STR("\x80", "\"\\ufffd\"");				    /* lone continuation */
	EXPECT_STR("a\xffz", "\"a\\ufffdz\"");				    /* never valid */
	EXPECT_STR("\xc0\xaf", "\"\\ufffd\\ufffd\"");			    /* overlong '/' */
	EXPECT_STR("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");	    /* overlong, 3 bytes */
	EXPECT_STR("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	    /* surrogate U+D800 */
	EXPECT_STR("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
	EXPECT_STR("\xe2\x82", "\"\\ufffd\\ufffd\"");			    /* cut at the end */
	EXPECT_STR("\xe2\x82z", "\"\\ufffd\\ufffdz\""); /* cut by an ASCII byte */
	EXPECT_STR("\xc3\"", "\"\\ufffd\\\"\"");	/* cut by a quote, still escaped */
}

static void test_null_string(void **state)
{
	(void)state;
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	ctp_jsonw_str(&w, NULL);
	CTP_JSONW_LIT(&w, ",");
	ctp_jsonw_str(&w, "x");
	assert_string_equal(text(&w), "null,\"x\"");
	ctp_jsonw_free(&w);
}

static void test_integers_at_extremes(void **state)
{
	(void)state;
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	ctp_jsonw_u64(&w, 0);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_u64(&w, 9);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_u64(&w, 10);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_u64(&w, UINT64_MAX);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_i64(&w, 0);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_i64(&w, -1);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_i64(&w, INT64_MAX);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_i64(&w, INT64_MIN);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_hex(&w, 0);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_hex(&w, 0xabcdef);
	CTP_JSONW_LIT(&w, " ");
	ctp_jsonw_hex(&w, UINT64_MAX);
	assert_string_equal(text(&w), "0 9 10 18446744073709551615 0 -1 9223372036854775807 "
				      "-9223372036854775808 \"0x0\" \"0xabcdef\" "
				      "\"0xffffffffffffffff\"");
	ctp_jsonw_free(&w);
}

/* Every digit count, on both sides of each power of ten and of 2^32, written as printf writes
 * it; in one writer, and each value twice around a neighbour, as a trace's timestamps come (the
 * writer reuses the digits above the last eight of the number before). */
static void test_integers_at_digit_boundaries(void **state)
{
	(void)state;
	uint64_t values[80];
	size_t n = 0;
	uint64_t p = 1;
	for (int k = 0; k < 20; k++, p *= 10) {
		values[n++] = p - 1;
		values[n++] = p;
		values[n++] = p + 1;
	}
	values[n++] = UINT32_MAX;
	values[n++] = (uint64_t)UINT32_MAX + 1;
	values[n++] = 99999999999999ull * 101; /* a 16-digit number with odd pairs */
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	char want[80 * 3 * 22] = "";
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t seq[3] = {values[i], values[i] + 100000000, values[i]};
		for (int k = 0; k < 3; k++) {
			ctp_jsonw_u64(&w, seq[k]);
			CTP_JSONW_LIT(&w, " ");
			at += (size_t)snprintf(want + at, sizeof(want) - at, "%llu ",
					       (unsigned long long)seq[k]);
		}
	}
	assert_string_equal(text(&w), want);
	ctp_jsonw_free(&w);
}

/* The digits are made eight at a time in lanes of one word (ctp_jsonw_digits8), where a lane
 * that overflowed into its neighbour would garble only some values: every number below 2 * 10^5
 * (all four-digit lanes, every pair and digit in each position), then numbers of every length
 * from a fixed pseudo-random sequence, each as printf writes it. */
static void expect_numbers(uint64_t first, uint64_t count, uint64_t (*next)(uint64_t *))
{
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	uint64_t state = first;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t v = next(&state);
		ctp_jsonw_reset(&w);
		ctp_jsonw_u64(&w, v);
		char want[24];
		int n = snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
		if (w.len != (size_t)n || memcmp(w.buf, want, w.len) != 0)
			fail_msg("%s written as %.*s", want, (int)w.len, w.buf);
	}
	ctp_jsonw_free(&w);
}

static uint64_t counting(uint64_t *state)
{
	return (*state)++;
}

/* A number of 1 to 20 digits, of uniformly random length (xorshift64*). */
static uint64_t random_length(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	uint64_t r = *state * 0x2545F4914F6CDD1Dull;
	unsigned bits = 1 + (unsigned)(r >> 58); /* 1-64 */
	return (r << 6 | r >> 58) >> (64 - bits);
}

static void test_integers_every_lane(void **state)
{
	(void)state;
	expect_numbers(0, 200000, counting);
	expect_numbers(99999000, 2000, counting);
	expect_numbers(0x9E3779B97F4A7C15ull, 1000000, random_length);
}

static void test_long_string_grows(void **state)
{
	(void)state;
	/* Worst case: every byte escaped to six. */
	enum { N = 10000 };
	static char in[N];
	memset(in, 0x01, N);
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	ctp_jsonw_strn(&w, in, N);
	assert_int_equal(w.len, 6 * N + 2);
	assert_memory_equal(w.buf + 1, "\\u0001", 6);
	assert_memory_equal(w.buf + w.len - 7, "\\u0001\"", 7);
	ctp_jsonw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quotes_and_backslash),
		cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_valid_utf8_passes),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_null_string),
		cmocka_unit_test(test_integers_at_extremes),
		cmocka_unit_test(test_integers_at_digit_boundaries),
		cmocka_unit_test(test_integers_every_lane),
		cmocka_unit_test(test_long_string_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

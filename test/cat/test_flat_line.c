/* The fast scanner of flat trace lines (cat/reader/flat_line.c): it must read the lines it
 * takes exactly as jansson would, and leave every other line to jansson. Each input below is
 * checked against jansson itself, so that the test says what jansson says, not what we think it
 * says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cat/reader/flat_line.h"

/* Scans `text`, and when the scanner takes it checks every field against jansson's parse. */
static bool scan(const char *text, struct ctp_flat_line *l)
{
	if (!ctp_flat_scan(text, strlen(text), l))
		return false;
	json_t *obj = json_loads(text, JSON_ALLOW_NUL, NULL);
	assert_true(json_is_object(obj));
	for (size_t i = 0; i < l->n; i++) {
		const struct ctp_flat_field *f = &l->fields[i];
		char key[64];
		assert_true(f->key_len < sizeof(key));
		memcpy(key, f->key, f->key_len);
		key[f->key_len] = '\0';
		if (ctp_flat_get(l, key) != f)
			continue;
		json_t *v = json_object_get(obj, key);
		switch (f->kind) {
		case CTP_FLAT_NULL:
			assert_true(json_is_null(v));
			break;
		case CTP_FLAT_TRUE:
			assert_true(json_is_true(v));
			break;
		case CTP_FLAT_FALSE:
			assert_true(json_is_false(v));
			break;
		case CTP_FLAT_INT:
			assert_true(json_is_integer(v));
			assert_true(json_integer_value(v) == f->num);
			break;
		case CTP_FLAT_STRING:
			assert_true(json_is_string(v));
			assert_int_equal(json_string_length(v), f->str_len);
			assert_memory_equal(json_string_value(v), f->str, f->str_len);
			break;
		}
	}
	json_decref(obj);
	return true;
}

static void test_flat_takes_collector_lines(void **state)
{
	(void)state;
	struct ctp_flat_line l;
	assert_true(scan("{\"type\":\"switch\",\"pid\":42,\"tid\":42,\"ts\":1000001,\"from\":1,"
			 "\"to\":2,\"how\":\"swapcontext\",\"stack\":null}",
			 &l));
	assert_int_equal(l.n, 8);
	const struct ctp_flat_field *f = ctp_flat_get(&l, "ts");
	assert_non_null(f);
	assert_int_equal(f->kind, CTP_FLAT_INT);
	assert_true(f->num == 1000001);
	assert_int_equal(ctp_flat_get(&l, "stack")->kind, CTP_FLAT_NULL);
	assert_null(ctp_flat_get(&l, "coro"));
	assert_true(scan("{}", &l));
	assert_int_equal(l.n, 0);
	assert_true(scan(" { \"a\" : true , \"b\":false,\"c\":-0,\"d\":-12 } \r", &l));
	assert_true(scan("{\"\":1,\"a\":2}", &l)); /* an empty key is a key */
	assert_non_null(ctp_flat_get(&l, ""));
	assert_true(ctp_flat_get(&l, "")->num == 1);
	assert_true(scan("{\"n\":999999999999999999}", &l));
	assert_true(ctp_flat_get(&l, "n")->num == 999999999999999999);
}

static void test_flat_last_repeated_key_counts(void **state)
{
	(void)state;
	struct ctp_flat_line l;
	assert_true(scan("{\"pid\":1,\"pid\":2}", &l));
	assert_true(ctp_flat_get(&l, "pid")->num == 2);
	assert_true(scan("{\"pid\":1,\"pid\":\"x\"}", &l));
	assert_int_equal(ctp_flat_get(&l, "pid")->kind, CTP_FLAT_STRING);
}

/* Lines the scanner leaves to jansson: valid JSON it does not read itself, and every kind of
 * invalid line (which jansson then rejects with its message). */
static void test_flat_leaves_others_to_jansson(void **state)
{
	(void)state;
	static const char *const others[] = {
		"{\"a\":[1]}",		       /* nested */
		"{\"a\":{\"b\":1}}",	       /* nested */
		"{\"a\":\"x\\ny\"}",	       /* escape */
		"{\"a\\u0062\":1}",	       /* escaped key */
		"{\"a\":\"\xc3\xa9\"}",	       /* UTF-8 */
		"{\"a\":1.5}",		       /* fraction */
		"{\"a\":1e3}",		       /* exponent */
		"{\"a\":1234567890123456789}", /* 19 digits */
		"[1]",			       /* not an object */
		"",			       /* nothing */
		"{",			       /* cut */
		"{\"a\":1",		       /* cut */
		"{\"a\":1,}",		       /* trailing comma */
		"{\"a\" 1}",		       /* no colon */
		"{\"a\":01}",		       /* leading zero */
		"{\"a\":-}",		       /* no digits */
		"{\"a\":tru}",		       /* bad literal */
		"{\"a\":truex}",	       /* bad literal */
		"{\"a\":1}x",		       /* trailing bytes */
		"{\"a\":1}{}",		       /* two objects */
		"{a:1}",		       /* bare key */
		"{\"a\":\"\t\"}",	       /* control byte */
		"{\"a\":\"x}",		       /* unterminated string */
	};
	struct ctp_flat_line l;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		assert_false(ctp_flat_scan(others[i], strlen(others[i]), &l));
}

static void test_flat_field_bound(void **state)
{
	(void)state;
	char text[1024] = "{";
	for (int i = 0; i <= CTP_FLAT_MAX_FIELDS; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\"k%d\":%d",
			 i ? "," : "", i, i);
	strcat(text, "}");
	struct ctp_flat_line l;
	assert_false(ctp_flat_scan(text, strlen(text), &l));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat_takes_collector_lines),
		cmocka_unit_test(test_flat_last_repeated_key_counts),
		cmocka_unit_test(test_flat_leaves_others_to_jansson),
		cmocka_unit_test(test_flat_field_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

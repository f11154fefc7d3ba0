/* libFuzzer target for the reading side: the trace reader (zstd frames, lines, JSON, the header
 * and end checks) and the analysis behind --report, which consumes what the reader yields.
 * Neither may crash, leak or trip a sanitizer on any input, and memory must stay bounded; the
 * fast scanner of flat lines must agree with jansson on every line it reads (check_flat).
 *
 * The first byte chooses how the rest is read, so that the fuzzer reaches the line layer too
 * (random bytes rarely make a zstd frame whose checksum holds):
 *   bit 0: the rest is plain text, compressed here into frames (a frame ends after each byte
 *          0x1e, the record separator, which is dropped); else the rest is the file as is;
 *   bit 1: small bounds (a line of 512 bytes, 64 values) so that inputs of a few kB reach the
 *          paths for lines over the bounds. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "cat/analysis/analysis.h"
#include "cat/reader/trace_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compresses `text` into `fd` as frames split at 0x1e bytes. */
static void write_frames(int fd, const uint8_t *text, size_t n)
{
	size_t cap = ZSTD_compressBound(n);
	void *frame = malloc(cap);
	if (!frame)
		return;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && text[i] != 0x1e)
			continue;
		size_t z = ZSTD_compress(frame, cap, text + start, i - start, 1);
		if (!ZSTD_isError(z) && write(fd, frame, z) != (ssize_t)z)
			break;
		start = i + 1;
	}
	free(frame);
}

/* Everything a caller may read of a line, touched so that the sanitizers check it. */
static size_t touch(const struct ctp_trace_line *line)
{
	size_t sum = line->len + (size_t)line->number;
	for (size_t i = 0; i < line->len; i++)
		sum += (unsigned char)line->text[i];
	if (line->error)
		sum += strlen(line->error);
	return sum;
}

/* The fast scanner (cat/reader/flat_line.h) must read a line exactly as jansson does: jansson
 * must accept every line it accepts, with the same fields and values (the last of repeated
 * keys). abort() makes libFuzzer save the input. */
static void check_flat(const struct ctp_trace_line *line)
{
	if (!line->flat)
		return;
	json_t *obj = json_loadb(line->text, line->len, JSON_ALLOW_NUL, NULL);
	if (!json_is_object(obj))
		abort();
	size_t distinct = 0;
	for (size_t i = 0; i < line->flat->n; i++) {
		const struct ctp_flat_field *f = &line->flat->fields[i];
		/* Keys of any length are valid JSON: the fuzzer found one of over 511 bytes. */
		char *key = malloc(f->key_len + 1);
		if (!key)
			abort();
		memcpy(key, f->key, f->key_len);
		key[f->key_len] = '\0';
		if (ctp_flat_get(line->flat, key) != f) {
			free(key);
			continue; /* repeated: the last one counts */
		}
		distinct++;
		json_t *v = json_object_get(obj, key);
		free(key);
		bool same = false;
		switch (f->kind) {
		case CTP_FLAT_NULL:
			same = json_is_null(v);
			break;
		case CTP_FLAT_TRUE:
			same = json_is_true(v);
			break;
		case CTP_FLAT_FALSE:
			same = json_is_false(v);
			break;
		case CTP_FLAT_INT:
			same = json_is_integer(v) && json_integer_value(v) == f->num;
			break;
		case CTP_FLAT_STRING:
			same = json_is_string(v) && json_string_length(v) == f->str_len &&
			       memcmp(json_string_value(v), f->str, f->str_len) == 0;
			break;
		}
		if (!same)
			abort();
	}
	if (json_object_size(obj) != distinct)
		abort();
	json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t mode = data[0];
	int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (mode & 1)
		write_frames(fd, data + 1, size - 1);
	else if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		goto out;
	lseek(fd, 0, SEEK_SET);

	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	if (!r)
		goto out;
	if (mode & 2) {
		ctp_trace_reader_set_line_limit(r, 512);
		ctp_trace_reader_set_value_limit(r, 64);
	}
	struct ctp_analysis_options opt;
	ctp_analysis_options_default(&opt);
	struct ctp_analysis *a = ctp_analysis_new(&opt);
	struct ctp_trace_line line;
	enum ctp_trace_item item;
	volatile size_t sink = 0;
	struct ctp_event_decoder decoder;
	ctp_event_decoder_init(&decoder);
	while ((item = ctp_trace_reader_next(r, &line)) != CTP_TRACE_END) {
		sink += touch(&line);
		check_flat(&line);
		struct ctp_event ev;
		if (item == CTP_TRACE_LINE && a && ctp_event_decode(&decoder, &line, &ev) == 0) {
			const struct ctp_event *derived = ctp_event_derived(&decoder);
			if (derived)
				ctp_analysis_add_event(a, derived);
			ctp_analysis_add_event(a, &ev);
		}
	}
	ctp_event_decoder_free(&decoder);
	const struct ctp_trace_end *end = ctp_trace_reader_end(r);
	sink += strlen(end->why) + ctp_trace_end_missing(end) + ctp_trace_end_uncounted(end);
	if (a) {
		ctp_analysis_finish(a, end);
		ctp_analysis_free(a);
	}
	ctp_trace_reader_free(r);
	(void)sink;
out:
	close(fd);
	return 0;
}

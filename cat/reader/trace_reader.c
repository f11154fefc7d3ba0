#include "cat/reader/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/reader/json_count.h"
#include "cat/reader/zreader.h"

/* Decompressed bytes are taken in chunks of this size; a line that lies within one chunk is
 * parsed in place, only lines straddling chunks are copied. */
#define CHUNK_SIZE (128u << 10)

struct ctp_trace_reader {
	int fd;
	bool own_fd;
	struct ctp_zreader *zr;
	char *chunk;
	size_t chunk_pos, chunk_len;
	/* The line being assembled across chunks. */
	char *line;
	size_t line_len, line_cap;
	bool line_used;	   /* `line` was yielded: empty it on the next call */
	uint64_t open_len; /* bytes of the unfinished line so far, skipped ones included */
	bool skipping;	   /* the unfinished line is over the limit: drop it up to its '\n' */
	size_t limit;
	uint64_t value_limit;
	json_t *current; /* the object of the line last yielded */
	json_t *header;
	struct ctp_flat_line flat; /* the flat line last yielded */
	bool ended;
	char error[256]; /* why the line last yielded is bad */
	struct ctp_trace_end end;
};

struct ctp_trace_reader *ctp_trace_reader_from_fd(int fd)
{
	struct ctp_trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = fd;
	r->limit = CTP_TRACE_READER_LINE_LIMIT;
	r->value_limit = CTP_TRACE_READER_VALUE_LIMIT;
	r->zr = ctp_zreader_new(fd);
	r->chunk = malloc(CHUNK_SIZE);
	if (!r->zr || !r->chunk) {
		ctp_trace_reader_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

struct ctp_trace_reader *ctp_trace_reader_open(const char *path)
{
	if (strcmp(path, "-") == 0)
		return ctp_trace_reader_from_fd(STDIN_FILENO);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fd);
	if (!r) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	r->own_fd = true;
	return r;
}

void ctp_trace_reader_free(struct ctp_trace_reader *r)
{
	if (!r)
		return;
	ctp_zreader_free(r->zr);
	if (r->own_fd)
		close(r->fd);
	json_decref(r->current);
	json_decref(r->header);
	free(r->chunk);
	free(r->line);
	free(r);
}

void ctp_trace_reader_set_line_limit(struct ctp_trace_reader *r, size_t limit)
{
	r->limit = limit;
}

void ctp_trace_reader_set_value_limit(struct ctp_trace_reader *r, uint64_t limit)
{
	r->value_limit = limit;
}

uint64_t ctp_trace_end_missing(const struct ctp_trace_end *end)
{
	if (!end->end_line)
		return 0;
	uint64_t missing = end->end_unwritten;
	if (end->end_has_lines && end->end_lines > end->lines_before_end)
		missing += end->end_lines - end->lines_before_end;
	return missing;
}

uint64_t ctp_trace_end_uncounted(const struct ctp_trace_end *end)
{
	if (!end->end_line || !end->end_has_lines || end->lines_before_end <= end->end_lines)
		return 0;
	return end->lines_before_end - end->end_lines;
}

/* Copies `s` into `out`, with bytes that could garble a terminal (input is untrusted) shown as
 * '?'. */
static void copy_printable(char *out, size_t size, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < size; i++)
		out[i] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	out[i] = '\0';
}

bool ctp_trace_check_header(const json_t *obj, char *why, size_t why_size)
{
	if (!json_is_object(obj)) {
		snprintf(why, why_size, "first line is not a JSON object");
		return false;
	}
	const char *type = json_string_value(json_object_get(obj, "type"));
	if (!type || strcmp(type, "trace") != 0) {
		snprintf(why, why_size, "first line has no \"type\":\"trace\"");
		return false;
	}
	const char *format = json_string_value(json_object_get(obj, "format"));
	if (!format || strcmp(format, "ctp-trace") != 0) {
		snprintf(why, why_size, "header \"format\" is not \"ctp-trace\"");
		return false;
	}
	json_t *version = json_object_get(obj, "version");
	if (!json_is_integer(version)) {
		snprintf(why, why_size, "header has no integer \"version\"");
		return false;
	}
	json_int_t v = json_integer_value(version);
	if (v < 1 || v > CTP_TRACE_READER_VERSION) {
		snprintf(why, why_size, "format version %lld, this reader knows 1 to %d",
			 (long long)v, CTP_TRACE_READER_VERSION);
		return false;
	}
	return true;
}

/* Ends reading: no line is yielded after this. */
static enum ctp_trace_item end_with(struct ctp_trace_reader *r, enum ctp_trace_end_kind kind,
				    const char *why)
{
	r->ended = true;
	r->end.kind = kind;
	r->end.input_bytes = ctp_zreader_input_bytes(r->zr);
	r->end.frame_end = ctp_zreader_frame_end(r->zr);
	copy_printable(r->end.why, sizeof(r->end.why), why ? why : "");
	return CTP_TRACE_END;
}

/* A line after the `end` line: the trace is over, what follows is not part of it. */
static enum ctp_trace_item after_end(struct ctp_trace_reader *r)
{
	char why[sizeof(r->end.why)];
	snprintf(why, sizeof(why),
		 "more follows the end line (line %" PRIu64 "): traces concatenated?",
		 r->end.lines);
	return end_with(r, CTP_TRACE_TRAILING, why);
}

/* What note_type needs of a line, from either parse. */
struct line_facts {
	const char *type; /* NULL when it has no string `type` */
	size_t type_len;
	bool has_lines, has_unwritten;
	int64_t lines, unwritten;
};

static void facts_of_json(json_t *obj, struct line_facts *lf)
{
	json_t *type = json_object_get(obj, "type");
	lf->type = json_string_value(type);
	lf->type_len = lf->type ? json_string_length(type) : 0;
	json_t *lines = json_object_get(obj, "lines"),
	       *unwritten = json_object_get(obj, "unwritten");
	lf->has_lines = json_is_integer(lines);
	lf->lines = lf->has_lines ? json_integer_value(lines) : 0;
	lf->has_unwritten = json_is_integer(unwritten);
	lf->unwritten = lf->has_unwritten ? json_integer_value(unwritten) : 0;
}

static void facts_of_flat(const struct ctp_flat_line *l, struct line_facts *lf)
{
	const struct ctp_flat_field *type = ctp_flat_get(l, "type");
	const struct ctp_flat_field *lines = ctp_flat_get(l, "lines");
	const struct ctp_flat_field *unwritten = ctp_flat_get(l, "unwritten");
	bool is_string = type && type->kind == CTP_FLAT_STRING;
	lf->type = is_string ? type->str : NULL;
	lf->type_len = is_string ? type->str_len : 0;
	lf->has_lines = lines && lines->kind == CTP_FLAT_INT;
	lf->lines = lf->has_lines ? lines->num : 0;
	lf->has_unwritten = unwritten && unwritten->kind == CTP_FLAT_INT;
	lf->unwritten = lf->has_unwritten ? unwritten->num : 0;
}

static bool type_is(const struct line_facts *lf, const char *word)
{
	size_t n = strlen(word);
	return lf->type && lf->type_len == n && memcmp(lf->type, word, n) == 0;
}

/* Keeps what the `end` line says, to check it against what was read. Returns false for a
 * second `trace` header. */
static bool note_type(struct ctp_trace_reader *r, const struct line_facts *lf)
{
	if (type_is(lf, "trace"))
		return false;
	if (!type_is(lf, "end"))
		return true;
	struct ctp_trace_end *e = &r->end;
	e->end_line = true;
	e->lines_before_end = e->lines - 1;
	e->end_has_lines = lf->has_lines && lf->lines >= 0;
	e->end_lines = e->end_has_lines ? (uint64_t)lf->lines : 0;
	if (lf->has_unwritten && lf->unwritten > 0)
		e->end_unwritten = (uint64_t)lf->unwritten;
	return true;
}

/* A second `trace` header: the line of another trace, not counted as this one's. */
static enum ctp_trace_item second_header(struct ctp_trace_reader *r, uint64_t number)
{
	r->end.lines--;
	char why[sizeof(r->end.why)];
	snprintf(why, sizeof(why),
		 "a second trace header at line %" PRIu64 ": traces concatenated?", number);
	return end_with(r, CTP_TRACE_TRAILING, why);
}

static enum ctp_trace_item bad_line(struct ctp_trace_reader *r, struct ctp_trace_line *line)
{
	r->end.bad_lines++;
	line->json = NULL;
	line->flat = NULL;
	line->error = r->error;
	return CTP_TRACE_BAD_LINE;
}

/* Parses one complete line and yields it. The header line is checked here: reading stops when
 * it is not one. */
static enum ctp_trace_item yield(struct ctp_trace_reader *r, const char *text, size_t len,
				 struct ctp_trace_line *line)
{
	if (r->end.end_line)
		return after_end(r);
	r->end.lines++;
	line->text = text;
	line->len = len;
	line->number = r->end.lines;
	line->error = NULL;
	if (ctp_json_max_values(len) > r->value_limit &&
	    ctp_json_count_values(text, len, r->value_limit) > r->value_limit) {
		snprintf(r->error, sizeof(r->error), "more than %" PRIu64 " JSON values",
			 r->value_limit);
		if (line->number == 1)
			return end_with(r, CTP_TRACE_NOT_TRACE,
					"first line holds too many values to be a header");
		return bad_line(r, line);
	}
	line->json = NULL;
	line->flat = NULL;
	if (line->number > 1 && ctp_flat_scan(text, len, &r->flat)) {
		struct line_facts lf;
		facts_of_flat(&r->flat, &lf);
		if (!note_type(r, &lf))
			return second_header(r, line->number);
		line->flat = &r->flat;
		return CTP_TRACE_LINE;
	}
	json_error_t err;
	json_t *obj = json_loadb(text, len, JSON_ALLOW_NUL, &err);
	if (line->number == 1) {
		char why[sizeof(r->end.why)];
		if (!obj) {
			snprintf(why, sizeof(why), "first line is not JSON: %s", err.text);
			return end_with(r, CTP_TRACE_NOT_TRACE, why);
		}
		if (!ctp_trace_check_header(obj, why, sizeof(why))) {
			json_decref(obj);
			return end_with(r, CTP_TRACE_NOT_TRACE, why);
		}
		r->header = json_incref(obj);
	}
	if (!obj) {
		char msg[sizeof(r->error)];
		snprintf(msg, sizeof(msg), "not valid JSON (%s, at column %d)", err.text,
			 err.column);
		copy_printable(r->error, sizeof(r->error), msg);
		return bad_line(r, line);
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		snprintf(r->error, sizeof(r->error), "not a JSON object");
		return bad_line(r, line);
	}
	struct line_facts lf;
	facts_of_json(obj, &lf);
	if (line->number > 1 && !note_type(r, &lf)) {
		json_decref(obj);
		return second_header(r, line->number);
	}
	r->current = obj;
	line->json = obj;
	return CTP_TRACE_LINE;
}

static enum ctp_trace_item yield_too_long(struct ctp_trace_reader *r, struct ctp_trace_line *line)
{
	if (r->end.end_line)
		return after_end(r);
	r->end.lines++;
	line->text = "";
	line->len = 0;
	line->number = r->end.lines;
	snprintf(r->error, sizeof(r->error), "longer than %zu bytes", r->limit);
	if (line->number == 1)
		return end_with(r, CTP_TRACE_NOT_TRACE, "first line is too long to be a header");
	return bad_line(r, line);
}

/* Adds a piece of the unfinished line; past the limit the line is dropped, not stored. */
static bool append(struct ctp_trace_reader *r, const char *p, size_t n)
{
	r->open_len += n;
	if (r->skipping)
		return true;
	if (r->line_len + n > r->limit) {
		r->skipping = true;
		r->line_len = 0;
		return true;
	}
	if (r->line_len + n > r->line_cap) {
		size_t cap = r->line_cap ? r->line_cap : 4096;
		while (cap < r->line_len + n)
			cap *= 2;
		char *grown = realloc(r->line, cap);
		if (!grown)
			return false;
		r->line = grown;
		r->line_cap = cap;
	}
	memcpy(r->line + r->line_len, p, n);
	r->line_len += n;
	return true;
}

/* The line gathered across reads, now whole (or cut short by the end): handed out as one line,
 * or as one too long to keep. */
static enum ctp_trace_item yield_open_line(struct ctp_trace_reader *r, struct ctp_trace_line *line)
{
	bool too_long = r->skipping;
	r->open_len = 0;
	r->skipping = false;
	r->line_used = true;
	if (too_long)
		return yield_too_long(r, line);
	return yield(r, r->line, r->line_len, line);
}

/* The decompressed stream is over: yield an unterminated last line of a whole trace, or
 * classify the end. */
static enum ctp_trace_item at_end(struct ctp_trace_reader *r, struct ctp_trace_line *line)
{
	enum ctp_zreader_status st = ctp_zreader_status(r->zr);
	if (st == CTP_ZREADER_OK && r->open_len > 0) {
		/* Only a writer that broke the format leaves this; keep the bytes it wrote. */
		return yield_open_line(r, line);
	}
	r->end.partial_len = r->open_len;
	r->end.unfinished = st == CTP_ZREADER_EMPTY || st == CTP_ZREADER_TRUNCATED ||
			    (st == CTP_ZREADER_OK && r->end.lines > 0 && !r->end.end_line);
	const char *why = ctp_zreader_message(r->zr);
	if (r->end.lines == 0 && (st == CTP_ZREADER_TRUNCATED || st == CTP_ZREADER_CORRUPT)) {
		/* zstd, but not one whole line: nothing says this was ever a trace. */
		char msg[sizeof(r->end.why)];
		snprintf(msg, sizeof(msg), "%s before its first line was complete: %s",
			 st == CTP_ZREADER_TRUNCATED ? "cut off" : "damaged", why);
		return end_with(r, CTP_TRACE_NOT_TRACE, msg);
	}
	switch (st) {
	case CTP_ZREADER_OK:
		if (r->end.lines == 0)
			return end_with(r, CTP_TRACE_NOT_TRACE, "no lines in it");
		return end_with(r, CTP_TRACE_COMPLETE, NULL);
	case CTP_ZREADER_EMPTY:
		return end_with(r, CTP_TRACE_NOT_TRACE, "empty file");
	case CTP_ZREADER_NOT_ZSTD:
		return end_with(r, CTP_TRACE_NOT_TRACE, "not zstd-compressed");
	case CTP_ZREADER_TRUNCATED:
		return end_with(r, CTP_TRACE_TRUNCATED, why);
	case CTP_ZREADER_CORRUPT:
		return end_with(r, CTP_TRACE_CORRUPT, why);
	case CTP_ZREADER_IO_ERROR:
		return end_with(r, CTP_TRACE_IO_ERROR, why);
	}
	return end_with(r, CTP_TRACE_IO_ERROR, "unknown reader state");
}

enum ctp_trace_item ctp_trace_reader_next(struct ctp_trace_reader *r, struct ctp_trace_line *line)
{
	json_decref(r->current);
	r->current = NULL;
	if (r->line_used) {
		r->line_len = 0;
		r->line_used = false;
	}
	if (r->ended)
		return CTP_TRACE_END;
	for (;;) {
		if (r->chunk_pos == r->chunk_len) {
			r->chunk_pos = 0;
			r->chunk_len = ctp_zreader_read(r->zr, r->chunk, CHUNK_SIZE);
			if (r->chunk_len == 0)
				return at_end(r, line);
		}
		char *start = r->chunk + r->chunk_pos;
		size_t avail = r->chunk_len - r->chunk_pos;
		char *nl = memchr(start, '\n', avail);
		if (!nl) {
			if (!append(r, start, avail))
				return end_with(r, CTP_TRACE_IO_ERROR, strerror(ENOMEM));
			r->chunk_pos = r->chunk_len;
			continue;
		}
		size_t n = (size_t)(nl - start);
		r->chunk_pos += n + 1;
		if (r->open_len == 0 && n <= r->limit)
			return yield(r, start, n, line);
		if (!append(r, start, n))
			return end_with(r, CTP_TRACE_IO_ERROR, strerror(ENOMEM));
		return yield_open_line(r, line);
	}
}

json_t *ctp_trace_line_json(const struct ctp_trace_line *line)
{
	if (line->json)
		return json_incref(line->json);
	if (!line->flat)
		return NULL;
	return json_loadb(line->text, line->len, JSON_ALLOW_NUL, NULL);
}

const struct ctp_trace_end *ctp_trace_reader_end(const struct ctp_trace_reader *r)
{
	return &r->end;
}

json_t *ctp_trace_reader_header(const struct ctp_trace_reader *r)
{
	return r->header;
}

uint64_t ctp_trace_reader_input_bytes(const struct ctp_trace_reader *r)
{
	return ctp_zreader_input_bytes(r->zr);
}

bool ctp_trace_reader_pending(const struct ctp_trace_reader *r)
{
	return !r->ended && (r->chunk_pos < r->chunk_len || ctp_zreader_pending(r->zr));
}

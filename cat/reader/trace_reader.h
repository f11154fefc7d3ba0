/* Line iterator over a trace (docs/trace-format.md): decompresses the zstd frames as a stream,
 * yields each complete line parsed (flat lines by cat/reader/flat_line.h, the others and the
 * header by jansson), checks the header line, and at the end says whether the trace was whole
 * or where it was cut. Memory stays bounded by the longest line. */
#ifndef CTP_CAT_READER_TRACE_READER_H
#define CTP_CAT_READER_TRACE_READER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/reader/flat_line.h"

/* Highest format version this reader understands. */
#define CTP_TRACE_READER_VERSION 2

/* Default bound on one line; a longer line is skipped as a bad line. */
#define CTP_TRACE_READER_LINE_LIMIT (64u << 20)

/* Bound on the JSON values of one line (docs/trace-format.md): a line with more is skipped as a
 * bad line without being parsed, so that memory follows the values a trace can hold, not what a
 * line of the byte limit could make the parser build. The collector's fullest lines (a
 * process's argv, cut to 64 KiB, and stacks of 64 frames) hold a few tens of thousands. */
#define CTP_TRACE_READER_VALUE_LIMIT (1u << 18)

struct ctp_trace_reader;

/* Opens `path` ("-" is standard input). NULL with errno set when it cannot be opened. */
struct ctp_trace_reader *ctp_trace_reader_open(const char *path);

/* Reads from `fd`, which stays the caller's. NULL when out of memory. */
struct ctp_trace_reader *ctp_trace_reader_from_fd(int fd);

void ctp_trace_reader_free(struct ctp_trace_reader *r);

/* Lines longer than `limit` bytes (without the newline) are reported as bad and skipped. */
void ctp_trace_reader_set_line_limit(struct ctp_trace_reader *r, size_t limit);

/* Lines holding more than `limit` JSON values are reported as bad and skipped. */
void ctp_trace_reader_set_value_limit(struct ctp_trace_reader *r, uint64_t limit);

enum ctp_trace_item {
	CTP_TRACE_LINE,	    /* a complete line holding a JSON object */
	CTP_TRACE_BAD_LINE, /* a complete line that is not one: `error` says why */
	CTP_TRACE_END,	    /* nothing more: ctp_trace_reader_end() says how it ended */
};

/* One line. Everything here is the reader's and valid until the next call. */
struct ctp_trace_line {
	const char *text; /* the bytes of the line as written, without its '\n' */
	size_t len;	  /* for a line over the limit: 0, text is "" */
	uint64_t number;  /* 1-based, counting bad lines too */
	/* The parsed object: exactly one of these for a good line, both NULL for a bad one.
	 * `flat` when the line is a flat object (every field a scalar: most lines), else `json`
	 * (borrowed); the header line always has `json`. ctp_trace_line_json() gives any good
	 * line's json_t. */
	const struct ctp_flat_line *flat;
	json_t *json;
	const char *error;
};

/* The line's object as a jansson tree, parsed now for a flat line (the slow way: for the rare
 * reader that needs a json_t, such as an unknown line type's text view). A new reference,
 * NULL for a bad line or when out of memory. */
json_t *ctp_trace_line_json(const struct ctp_trace_line *line);

/* The next line. The first line of a trace is its header: it is yielded as a line only when it
 * is a valid `trace` header, else reading ends with CTP_TRACE_NOT_TRACE. The `end` line is the
 * last one yielded: anything after it, or a second header, ends reading with
 * CTP_TRACE_TRAILING. */
enum ctp_trace_item ctp_trace_reader_next(struct ctp_trace_reader *r, struct ctp_trace_line *line);

enum ctp_trace_end_kind {
	CTP_TRACE_COMPLETE,  /* every frame whole (see docs on cuts at a frame boundary) */
	CTP_TRACE_TRUNCATED, /* the input ended inside a frame */
	CTP_TRACE_CORRUPT,   /* a damaged frame after the readable part */
	CTP_TRACE_NOT_TRACE, /* empty, not zstd, or no complete valid header line: `why` says */
	CTP_TRACE_IO_ERROR,  /* reading the input failed: `why` is the system's message */
	CTP_TRACE_TRAILING,  /* lines after the trace's `end` line, or a second `trace` header
				(traces concatenated): `why` says which; they are not read */
};

struct ctp_trace_end {
	enum ctp_trace_end_kind kind;
	uint64_t input_bytes; /* compressed bytes there were: at a cut, where it is */
	uint64_t frame_end;   /* compressed offset just past the last complete frame */
	uint64_t lines;	      /* complete lines read, bad ones included */
	uint64_t bad_lines;   /* of which not JSON objects or too long */
	uint64_t partial_len; /* bytes of an unfinished last line that were dropped */
	char why[256];	      /* for NOT_TRACE, CORRUPT, IO_ERROR and TRAILING */
	/* The input stops where a writer still at work stops: empty, inside a frame, or after
	 * whole frames without the `end` line (its writer may be still at work, or was cut). */
	bool unfinished;
	/* The collector's `end` line, when one was read (docs/trace-format.md). */
	bool end_line;
	uint64_t lines_before_end; /* lines read before it */
	bool end_has_lines;	   /* it has a `lines` count (every collector writes one) */
	uint64_t end_lines;	   /* `lines`: lines it wrote before the end line */
	uint64_t end_unwritten;	   /* `unwritten`: lines it could not write (0 if absent) */
};

/* Lines the collector counted and this reading did not get: those it could not write (a full
 * disk), and those written that were not read. 0 without an `end` line. */
uint64_t ctp_trace_end_missing(const struct ctp_trace_end *end);

/* Lines read that the `end` line does not count (not the collector's: spliced in). */
uint64_t ctp_trace_end_uncounted(const struct ctp_trace_end *end);

/* How reading ended; meaningful once ctp_trace_reader_next() returned CTP_TRACE_END. */
const struct ctp_trace_end *ctp_trace_reader_end(const struct ctp_trace_reader *r);

/* Whether the reader has more to give without reading its input: lines decompressed and not
 * yet yielded, or input not yet decompressed. With nothing pending and no input waiting, the
 * next call would block on a slow input (a trace being followed). */
bool ctp_trace_reader_pending(const struct ctp_trace_reader *r);

/* Compressed bytes read so far (for progress shown while reading). */
uint64_t ctp_trace_reader_input_bytes(const struct ctp_trace_reader *r);

/* The header line's object once it has been read, else NULL (borrowed). */
json_t *ctp_trace_reader_header(const struct ctp_trace_reader *r);

/* Checks that `obj` is a trace header this reader understands; on failure writes why into
 * `why` and returns false. */
bool ctp_trace_check_header(const json_t *obj, char *why, size_t why_size);

#endif

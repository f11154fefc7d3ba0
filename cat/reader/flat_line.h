/* The fast way to read a trace line: nearly every line the collector writes (switch, coro,
 * coro_end, fd, state without a wait, loss, end) is one flat object of plain keys and scalar
 * values. This scanner reads such a line in one pass, without allocating, into a list of
 * fields that point into the line. It accepts only a strict subset of JSON that it can read
 * exactly as jansson does: any other line (nested values, escapes, non-ASCII bytes, fractions,
 * exponents, integers of 19 digits or more, and anything that is not JSON) is left to jansson,
 * which then says whether it is valid and reads it. Its profile showed jansson's tree building
 * (malloc per value, hashing per key) as two thirds of ctp-cat's time on a big trace. */
#ifndef CTP_CAT_READER_FLAT_LINE_H
#define CTP_CAT_READER_FLAT_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* More fields than this and the line is left to jansson (the collector writes at most 10). */
#define CTP_FLAT_MAX_FIELDS 32

enum ctp_flat_kind { CTP_FLAT_NULL, CTP_FLAT_FALSE, CTP_FLAT_TRUE, CTP_FLAT_INT, CTP_FLAT_STRING };

struct ctp_flat_field {
	const char *key; /* into the line, not NUL-terminated, no escapes */
	uint32_t key_len;
	enum ctp_flat_kind kind;
	/* CTP_FLAT_STRING: into the line, not NUL-terminated (a '"' follows), bytes 0x20-0x7e
	 * without '"' or '\\'. */
	const char *str;
	uint32_t str_len;
	int64_t num; /* CTP_FLAT_INT */
};

struct ctp_flat_line {
	size_t n;
	struct ctp_flat_field fields[CTP_FLAT_MAX_FIELDS];
};

/* Reads `text` into `out` when it is a flat object of the subset above; false otherwise (the
 * line may still be valid JSON: ask jansson). */
bool ctp_flat_scan(const char *text, size_t len, struct ctp_flat_line *out);

/* The field named `key`, the last one when the line repeats it (as jansson keeps the last);
 * NULL when absent. Inline, so that the length of a literal key is known when compiling: a
 * decoded line asks for ten fields among ten. */
static inline const struct ctp_flat_field *ctp_flat_get(const struct ctp_flat_line *l,
							const char *key)
{
	size_t n = strlen(key);
	for (size_t i = l->n; i-- > 0;) {
		const struct ctp_flat_field *f = &l->fields[i];
		if (f->key_len == n && (n == 0 || f->key[0] == key[0]) &&
		    memcmp(f->key, key, n) == 0)
			return f;
	}
	return NULL;
}

#endif

/* Counts the values in a JSON text without building them, so that a reader can refuse a line
 * whose parse would take far more memory than its bytes (jansson keeps ~140 bytes per value:
 * a 60 MB line of "[],[],..." holds 20 million of them and would take 2.8 GB). */
#ifndef CTP_CAT_READER_JSON_COUNT_H
#define CTP_CAT_READER_JSON_COUNT_H

#include <stddef.h>
#include <stdint.h>

/* The values a parser would build from `text`: each array, object, string (object keys
 * included), number and literal counts one. Counting stops once `stop_at` is exceeded (the
 * result is then stop_at + 1). The text is not checked for validity: in invalid JSON the count
 * is only an estimate, which is all a bound needs. */
uint64_t ctp_json_count_values(const char *text, size_t len, uint64_t stop_at);

/* At most this many values fit in `len` bytes of JSON ("[1,1,...]": two bytes a value):
 * a text this short needs no count. */
static inline uint64_t ctp_json_max_values(size_t len)
{
	return (uint64_t)len / 2 + 1;
}

#endif

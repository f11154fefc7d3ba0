/* Interned strings: one stored copy of each distinct string (symbols, modules, files, kinds
 * repeat on every line that names them), so that a decoded event's strings can be compared by
 * pointer and kept past the line they came from. They live as long as the table. */
#ifndef CTP_CAT_MODEL_STRINGS_H
#define CTP_CAT_MODEL_STRINGS_H

#include <stddef.h>

struct ctp_strings {
	char **slots;
	size_t cap, count;
};

/* The one stored copy of the `len` bytes at `s` (NULL for NULL), or NULL when out of memory. */
const char *ctp_strings_intern(struct ctp_strings *t, const char *s, size_t len);
void ctp_strings_free(struct ctp_strings *t);

#endif

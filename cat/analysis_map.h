/* Small containers of the analysis: a map from 64-bit keys to array indexes, and a set of
 * interned strings (frames repeat the same module and file names). Open addressing, linear
 * probing, grown at half load. */
#ifndef CTP_CAT_ANALYSIS_MAP_H
#define CTP_CAT_ANALYSIS_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctp_amap {
	uint64_t *keys;
	uint32_t *vals; /* UINT32_MAX: empty slot */
	size_t cap, count;
};

/* Sets key -> val (val < UINT32_MAX). Returns 0, or -1 when out of memory. */
int ctp_amap_put(struct ctp_amap *m, uint64_t key, uint32_t val);
/* True and *val when the key is there. */
bool ctp_amap_get(const struct ctp_amap *m, uint64_t key, uint32_t *val);
void ctp_amap_free(struct ctp_amap *m);

struct ctp_astrings {
	char **slots;
	size_t cap, count;
};

/* The one stored copy of `s` (NULL for NULL), or NULL when out of memory. */
const char *ctp_astrings_intern(struct ctp_astrings *t, const char *s);
void ctp_astrings_free(struct ctp_astrings *t);

#endif

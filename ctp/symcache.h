/* Symbols of one process: its module table (copied out of the segment's MODS blocks, so that
 * it outlives the mapping) and a cache of what each address symbolized to, so that every
 * distinct address is looked up once. */
#ifndef CTP_SYMCACHE_H
#define CTP_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctp/segment.h"
#include "ctp/segment_view.h"
#include "ctp/symbolize.h"

struct ctp_module_copy {
	uint64_t base, lo, hi;
	uint32_t build_id_len;
	uint8_t build_id[CTP_BUILD_ID_MAX];
	char *path;
};

/* What one address is. Strings belong to the symbolizer or the module copy. */
struct ctp_sym {
	uint64_t key;	     /* address, with bit 63 set for an entry (not a return) address */
	const char *sym;     /* NULL when unknown */
	const char *module;  /* NULL when the address is in no known module */
	const char *file;    /* NULL when unknown */
	uint64_t off;	     /* meaningful when sym != NULL */
	uint64_t module_off; /* the address less the module's load bias, when module != NULL */
	int line;	     /* 0 when unknown */
	bool used;
};

struct ctp_symcache {
	struct ctp_module_copy *mods;
	size_t nmods, mods_cap;
	uint64_t mods_seen; /* module entries in the segment when last read */
	struct ctp_sym *slots;
	size_t cap, count;
};

void ctp_symcache_free(struct ctp_symcache *c);

/* The module chunks one read takes: a process has one for every 64 modules it loaded. */
#define CTP_SYMCACHE_MODULE_CHUNKS 64

/* Adds the modules of `n` module chunks (checked refs, newest first, as the block list has
 * them) not copied yet; `total` is how many entries they hold in all, which says whether any
 * was added since the last read. */
void ctp_symcache_add_modules(struct ctp_symcache *c, const struct ctp_module_ref *refs, size_t n,
			      uint64_t total);

/* Reads the module blocks of a whole mapping of the segment and adds modules not copied yet. */
void ctp_symcache_read_modules(struct ctp_symcache *c, const struct ctp_segment_view *v);

/* Where a lookup finds modules loaded since the table was last read (dlopen): `read` adds
 * them to the cache. */
struct ctp_module_source {
	void (*read)(void *ctx, struct ctp_symcache *c);
	void *ctx;
};
/* A `read` for a whole mapping of the segment: ctx is its struct ctp_segment_view. */
void ctp_symcache_read_modules_of(void *view, struct ctp_symcache *c);

/* Makes room for `n` addresses not looked up yet, so that the entries the next `n` lookups
 * return stay valid together: a lookup that grows the cache moves every entry, and a caller
 * that keeps the entries of a whole stack (to write its `stack` line) must reserve first. */
void ctp_symcache_reserve(struct ctp_symcache *c, size_t n);

/* Symbolizes `addr` (a return address of an unwound stack, or an entry function when
 * `return_address` is false), once per address. The entry stays valid until a later lookup
 * grows the cache (see ctp_symcache_reserve). `src` is read for new modules when the address is
 * in none known (dlopen); it may be NULL once the process's segment is gone. */
const struct ctp_sym *ctp_symcache_lookup(struct ctp_symcache *c, struct ctp_symbolizer *s,
					  const struct ctp_module_source *src, uint64_t addr,
					  bool return_address);

#endif

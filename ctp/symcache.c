#define _GNU_SOURCE /* program_invocation_short_name */
#include "ctp/symcache.h"
#include "ctp/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctp/atomics.h"

#define ENTRY_BIT (1ull << 63)

void ctp_symcache_free(struct ctp_symcache *c)
{
	for (size_t i = 0; i < c->nmods; i++)
		free(c->mods[i].path);
	free(c->mods);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

static bool have_module(const struct ctp_symcache *c, const struct ctp_module *m, const char *path)
{
	for (size_t i = 0; i < c->nmods; i++) {
		const struct ctp_module_copy *k = &c->mods[i];
		if (k->lo == m->lo && k->hi == m->hi && k->base == m->base &&
		    strcmp(k->path, path) == 0)
			return true;
	}
	return false;
}

/* Copies the entries of one module chunk that are not known yet. */
static void add_chunk(struct ctp_symcache *c, const struct ctp_module_ref *ref)
{
	for (uint32_t i = 0; i < ref->count; i++) {
		/* Copy the entry first: the process may still be writing next to it. */
		struct ctp_module m;
		memcpy(&m, &ref->modules[i], sizeof(m));
		char path[CTP_MODULE_PATH_MAX];
		size_t len = strnlen(m.path, sizeof(m.path) - 1);
		memcpy(path, m.path, len);
		path[len] = '\0';
		if (m.lo >= m.hi || have_module(c, &m, path))
			continue;
		if (c->nmods == c->mods_cap) {
			c->mods_cap = c->mods_cap ? c->mods_cap * 2 : 64;
			c->mods = ctp_xrealloc(c->mods, c->mods_cap * sizeof(*c->mods));
		}
		struct ctp_module_copy *k = &c->mods[c->nmods++];
		k->base = m.base;
		k->lo = m.lo;
		k->hi = m.hi;
		k->build_id_len = m.build_id_len > CTP_BUILD_ID_MAX ? 0 : m.build_id_len;
		memcpy(k->build_id, m.build_id, sizeof(k->build_id));
		k->path = strdup(path);
		if (!k->path) {
			fprintf(stderr, "%s: out of memory (symbols)\n",
				program_invocation_short_name);
			abort();
		}
	}
}

void ctp_symcache_add_modules(struct ctp_symcache *c, const struct ctp_module_ref *refs, size_t n,
			      uint64_t total)
{
	if (total == c->mods_seen)
		return; /* nothing was added since the last read */
	c->mods_seen = total;
	/* Blocks are listed newest first; copy the oldest first so the main program comes
	 * before what it dlopened. */
	for (size_t i = n; i-- > 0;)
		add_chunk(c, &refs[i]);
}

struct walk {
	const struct ctp_segment_view *v;
	struct ctp_module_ref refs[CTP_SYMCACHE_MODULE_CHUNKS];
	size_t nrefs;
	uint64_t total;
};

static void visit_block(void *ctx, struct ctp_block *b, uint64_t off)
{
	struct walk *w = ctx;
	struct ctp_module_ref ref;
	if (CTP_LOAD_RELAXED(&b->kind) != CTP_BLOCK_MODULES ||
	    !ctp_view_module_chunk(w->v, b, off, &ref))
		return;
	w->total += ref.count;
	if (w->nrefs < CTP_SYMCACHE_MODULE_CHUNKS)
		w->refs[w->nrefs++] = ref;
}

void ctp_symcache_read_modules(struct ctp_symcache *c, const struct ctp_segment_view *v)
{
	struct walk w = {.v = v};
	ctp_view_blocks(v, visit_block, &w);
	ctp_symcache_add_modules(c, w.refs, w.nrefs, w.total);
}

void ctp_symcache_read_modules_of(void *view, struct ctp_symcache *c)
{
	ctp_symcache_read_modules(c, view);
}

static const struct ctp_module_copy *module_of(const struct ctp_symcache *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nmods; i++)
		if (addr >= c->mods[i].lo && addr < c->mods[i].hi)
			return &c->mods[i];
	return NULL;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static void grow(struct ctp_symcache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 1024;
	struct ctp_sym *slots = ctp_xcalloc(cap, sizeof(*slots));
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->slots[i].used)
			continue;
		size_t j = slot_of(c->slots[i].key, cap);
		while (slots[j].used)
			j = (j + 1) & (cap - 1);
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
}

void ctp_symcache_reserve(struct ctp_symcache *c, size_t n)
{
	while ((c->count + n + 1) * 2 > c->cap)
		grow(c);
}

const struct ctp_sym *ctp_symcache_lookup(struct ctp_symcache *c, struct ctp_symbolizer *s,
					  const struct ctp_module_source *src, uint64_t addr,
					  bool return_address)
{
	uint64_t key = (addr & ~ENTRY_BIT) | (return_address ? 0 : ENTRY_BIT);
	if ((c->count + 1) * 2 > c->cap)
		grow(c);
	size_t j = slot_of(key, c->cap);
	for (; c->slots[j].used; j = (j + 1) & (c->cap - 1))
		if (c->slots[j].key == key)
			return &c->slots[j];

	const struct ctp_module_copy *m = module_of(c, addr);
	if (!m && src && src->read) {
		/* Perhaps a module loaded (dlopen) since the table was last read. */
		src->read(src->ctx, c);
		m = module_of(c, addr);
	}
	struct ctp_sym *e = &c->slots[j];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->used = true;
	c->count++;
	if (!m)
		return e;
	e->module = m->path;
	e->module_off = addr - m->base;
	struct ctp_frame_info fi = {0};
	if (s && ctp_symbolize(s, m->path, m->build_id, m->build_id_len, m->base, addr,
			       return_address, &fi)) {
		e->sym = fi.sym;
		e->off = fi.off;
		e->file = fi.file;
		e->line = fi.line;
	}
	return e;
}

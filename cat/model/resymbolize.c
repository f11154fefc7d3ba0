#include "cat/model/resymbolize.h"

#include <stdlib.h>
#include <string.h>

#include "cat/model/grow.h"
#include "ctp/segment.h"
#include "ctp/symbolize.h"

struct resym_module {
	uint32_t pid;
	uint64_t lo, hi, bias;
	char *path;
	uint8_t build_id[CTP_BUILD_ID_MAX];
	size_t build_id_len;
};

struct ctp_resym {
	struct ctp_symbolizer *sym; /* made at the first module line */
	bool sym_failed;	    /* libelf could not start: no names */
	struct resym_module *mods;
	size_t nmods, cap_mods;
};

void ctp_resym_free(struct ctp_resym *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nmods; i++)
		free(r->mods[i].path);
	free(r->mods);
	ctp_symbolizer_free(r->sym);
	free(r);
}

static size_t hex_to_bytes(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; hex && hex[0] && hex[1] && n < cap; hex += 2) {
		unsigned v;
		char pair[3] = {hex[0], hex[1], 0}, *end;
		v = (unsigned)strtoul(pair, &end, 16);
		if (*end)
			return 0; /* not hex: no build-id rather than a wrong one */
		out[n++] = (uint8_t)v;
	}
	return hex && hex[0] ? 0 : n;
}

static int add_module(void *state, const struct ctp_event *ev)
{
	struct ctp_resym *r = state;
	if (!ev->module_line.path || ev->module_line.lo >= ev->module_line.hi)
		return 0; /* nothing to look up by */
	/* The symbolizer only once there is something to symbolize with. */
	if (!r->sym && !r->sym_failed) {
		r->sym = ctp_symbolizer_new();
		r->sym_failed = !r->sym;
	}
	if (CTP_GROW(r->mods, r->cap_mods, r->nmods + 1) < 0)
		return -1;
	struct resym_module *m = &r->mods[r->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(ev->module_line.path);
	if (!m->path)
		return -1;
	m->pid = ev->pid;
	m->lo = ev->module_line.lo;
	m->hi = ev->module_line.hi;
	m->bias = ev->module_line.bias;
	m->build_id_len = hex_to_bytes(ev->module_line.build_id, m->build_id, sizeof(m->build_id));
	r->nmods++;
	return 0;
}

/* The module of pid holding addr; the latest line wins (a library loaded again elsewhere). */
static const struct resym_module *module_at(const struct ctp_resym *r, uint32_t pid, uint64_t addr)
{
	for (size_t i = r ? r->nmods : 0; i-- > 0;) {
		const struct resym_module *m = &r->mods[i];
		if (m->pid == pid && addr >= m->lo && addr < m->hi)
			return m;
	}
	return NULL;
}

static bool lookup_in(struct ctp_resym *r, const struct resym_module *m, uint64_t addr,
		      bool return_address, struct ctp_frame_info *out)
{
	return m && r->sym &&
	       ctp_symbolize(r->sym, m->path, m->build_id, m->build_id_len, m->bias, addr,
			     return_address, out) &&
	       out->sym;
}

static void name_frame(void *state, uint32_t pid, struct ctp_event_frame *fr)
{
	struct ctp_resym *r = state;
	const struct resym_module *m = module_at(r, pid, fr->addr);
	if (m) {
		fr->has_module_off = true;
		fr->module_off = fr->addr - m->bias;
		if (!fr->module)
			fr->module = m->path;
	}
	struct ctp_frame_info info;
	if (!lookup_in(r, m, fr->addr, true, &info))
		return;
	fr->sym = info.sym;
	fr->has_off = true;
	fr->off = info.off;
	if (!fr->file && info.file) {
		fr->file = info.file;
		fr->line = info.line;
	}
}

static const char *name_entry(void *state, uint32_t pid, uint64_t addr)
{
	struct ctp_frame_info info;
	struct ctp_resym *r = state;
	return addr && lookup_in(r, module_at(r, pid, addr), addr, false, &info) ? info.sym : NULL;
}

static const struct ctp_event_namer namer = {
	.module = add_module,
	.frame = name_frame,
	.entry = name_entry,
};

struct ctp_resym *ctp_resym_attach(struct ctp_event_decoder *d)
{
	struct ctp_resym *r = calloc(1, sizeof(*r));
	if (r) {
		d->namer = &namer;
		d->namer_state = r;
	}
	return r;
}

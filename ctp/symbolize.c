/* The symbolizer's caches: one module per (path, build-id), opened once (also when it fails,
 * so that an unreadable module costs one open, not one per address), and per module the
 * answers already given for each address. */
#include "ctp/symbolize.h"
#include "ctp/symbolize_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct addr_entry {
	uint64_t
		key; /* vaddr << 1 | return_address; 0 marks a free slot (vaddr 0 is never asked) */
	struct ctp_frame_info info;
};

struct module {
	struct module *next; /* hash chain */
	uint64_t hash;
	char *path;
	uint8_t *build_id;
	size_t build_id_len;

	bool usable;	  /* false: unreadable, not ELF, or not the build that ran */
	bool relocatable; /* ET_DYN: file vaddr = pc - load bias; ET_EXEC: file vaddr = pc */
	struct ctp_elf_file file;     /* the object itself; closed if its build-id is wrong */
	struct ctp_elf_file debug;    /* its separate debug file, if any */
	struct ctp_elf_file unpacked; /* the one DWARF is read from, decompressed (if cached) */
	struct ctp_symtab *symtab;
	Dwarf *dwarf;
	bool dwarf_lost; /* libdw failed in it: never read, nor ended (symbolize_guard.c) */

	struct addr_entry *addrs; /* open addressing, power-of-two capacity */
	size_t addrs_cap;
	size_t addrs_used;
};

#define CTP_SYMBOLIZER_BUCKETS 256u

struct ctp_symbolizer {
	struct module *buckets[CTP_SYMBOLIZER_BUCKETS];
	struct module *last; /* consecutive frames are often in one module */
	char *debug_dir;     /* NULL: CTP_DEBUG_DIR */
};

struct ctp_symbolizer *ctp_symbolizer_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct ctp_symbolizer));
}

bool ctp_symbolizer_set_debug_dir(struct ctp_symbolizer *s, const char *dir)
{
	char *copy = strdup(dir);
	if (copy == NULL)
		return false;
	free(s->debug_dir);
	s->debug_dir = copy;
	return true;
}

static void module_free(struct module *m)
{
	if (m->dwarf != NULL && !m->dwarf_lost)
		dwarf_end(m->dwarf);
	ctp_symtab_free(m->symtab);
	ctp_elf_file_close(&m->unpacked);
	ctp_elf_file_close(&m->debug);
	ctp_elf_file_close(&m->file);
	free(m->addrs);
	free(m->build_id);
	free(m->path);
	free(m);
}

void ctp_symbolizer_free(struct ctp_symbolizer *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < CTP_SYMBOLIZER_BUCKETS; i++) {
		struct module *m = s->buckets[i];
		while (m != NULL) {
			struct module *next = m->next;
			module_free(m);
			m = next;
		}
	}
	free(s->debug_dir);
	free(s);
}

/* FNV-1a over the path and the build-id. */
static uint64_t module_hash(const char *path, const uint8_t *id, size_t id_len)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3u;
	h = (h ^ 0xff) * 0x100000001b3u;
	for (size_t i = 0; i < id_len; i++)
		h = (h ^ id[i]) * 0x100000001b3u;
	return h;
}

static bool module_is(const struct module *m, uint64_t hash, const char *path, const uint8_t *id,
		      size_t id_len)
{
	return m->hash == hash && m->build_id_len == id_len && strcmp(m->path, path) == 0 &&
	       (id_len == 0 || memcmp(m->build_id, id, id_len) == 0);
}

static bool has_symtab(Elf *elf)
{
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* The DWARF of f, read from its decompressed copy in the user's cache when its sections are
 * compressed (symbolize_unpacked.c says why). */
static Dwarf *dwarf_of(struct module *m, const struct ctp_elf_file *f, const uint8_t *id,
		       size_t id_len)
{
	if (f->elf == NULL)
		return NULL;
	if (id_len > 0 && ctp_elf_dwarf_compressed(f->elf) &&
	    ctp_elf_unpacked_open(&m->unpacked, f, id, id_len)) {
		Dwarf *d = dwarf_begin_elf(m->unpacked.elf, DWARF_C_READ, NULL);
		if (d != NULL)
			return d;
		ctp_elf_file_close(&m->unpacked);
	}
	return dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
}

/* Which file answers what. A build-id that the file on disk does not carry means the file was
 * replaced since the run: its symbols would be wrong, so only a debug file found by the
 * build-id (which describes exactly the build that ran) may answer. */
static void module_open(struct module *m, const char *debug_dir)
{
	m->file.fd = m->debug.fd = m->unpacked.fd = -1;
	if (!ctp_elf_file_open(&m->file, m->path))
		return;
	const uint8_t *own_id = NULL;
	size_t own_len = ctp_elf_build_id(m->file.elf, &own_id);
	if (m->build_id_len > 0 &&
	    (own_len != m->build_id_len || memcmp(own_id, m->build_id, own_len) != 0))
		ctp_elf_file_close(&m->file);

	const uint8_t *id = m->build_id_len > 0 ? m->build_id : own_id;
	size_t id_len = m->build_id_len > 0 ? m->build_id_len : own_len;
	ctp_elf_debug_file_open(&m->debug, debug_dir, id, id_len);
	/* A stripped module with no debug file here: its build-id may be known to debuginfod. */
	if (m->debug.elf == NULL && !has_symtab(m->file.elf))
		ctp_debuginfod_open(&m->debug, id, id_len, m->path);

	Elf *main = m->file.elf, *debug = m->debug.elf;
	Elf *type_src = main != NULL ? main : debug;
	GElf_Ehdr ehdr;
	if (type_src == NULL || gelf_getehdr(type_src, &ehdr) == NULL)
		return;
	m->relocatable = ehdr.e_type == ET_DYN;

	/* .symtab (every function) over .dynsym (exported ones only). */
	if (main != NULL)
		m->symtab = ctp_symtab_load(main, SHT_SYMTAB);
	if (m->symtab == NULL && debug != NULL)
		m->symtab = ctp_symtab_load(debug, SHT_SYMTAB);
	if (m->symtab == NULL && main != NULL)
		m->symtab = ctp_symtab_load(main, SHT_DYNSYM);

	m->dwarf = ctp_dwarf_guard(dwarf_of(m, &m->file, id, id_len));
	if (m->dwarf == NULL)
		m->dwarf = ctp_dwarf_guard(dwarf_of(m, &m->debug, id, id_len));
	m->usable = true;
}

static struct module *module_get(struct ctp_symbolizer *s, const char *path, const uint8_t *id,
				 size_t id_len)
{
	uint64_t hash = module_hash(path, id, id_len);
	if (s->last != NULL && module_is(s->last, hash, path, id, id_len))
		return s->last;
	struct module **bucket = &s->buckets[hash % CTP_SYMBOLIZER_BUCKETS];
	for (struct module *m = *bucket; m != NULL; m = m->next) {
		if (module_is(m, hash, path, id, id_len))
			return s->last = m;
	}
	struct module *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->hash = hash;
	m->path = strdup(path);
	m->build_id = malloc(id_len ? id_len : 1);
	if (m->path == NULL || m->build_id == NULL) {
		free(m->path);
		free(m->build_id);
		free(m);
		return NULL;
	}
	if (id_len > 0)
		memcpy(m->build_id, id, id_len);
	m->build_id_len = id_len;
	module_open(m, s->debug_dir != NULL ? s->debug_dir : CTP_DEBUG_DIR);
	m->next = *bucket;
	*bucket = m;
	return s->last = m;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdu;
	x ^= x >> 33;
	return x;
}

static struct addr_entry *addr_slot(struct module *m, uint64_t key)
{
	size_t mask = m->addrs_cap - 1;
	for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
		if (m->addrs[i].key == key || m->addrs[i].key == 0)
			return &m->addrs[i];
	}
}

/* The slot for key, found or claimed; NULL if the table cannot grow (then nothing is cached). */
static struct addr_entry *addr_lookup(struct module *m, uint64_t key, bool *found)
{
	if (m->addrs_used + 1 > m->addrs_cap / 2) {
		size_t cap = m->addrs_cap ? m->addrs_cap * 2 : 256;
		struct addr_entry *old = m->addrs;
		size_t old_cap = m->addrs_cap;
		struct addr_entry *fresh = calloc(cap, sizeof(*fresh));
		if (fresh == NULL)
			return NULL;
		m->addrs = fresh;
		m->addrs_cap = cap;
		for (size_t i = 0; i < old_cap; i++) {
			if (old[i].key != 0)
				*addr_slot(m, old[i].key) = old[i];
		}
		free(old);
	}
	struct addr_entry *e = addr_slot(m, key);
	*found = e->key == key;
	return e;
}

/* libdw failed in the module's Dwarf (symbolize_guard.c): its frames keep the symbol table's
 * names, without file and line, and the file names of the answers given before stay valid (the
 * Dwarf is never ended). */
static void dwarf_lost(struct module *m, enum ctp_dwarf_answer why)
{
	m->dwarf_lost = true;
	fprintf(stderr,
		"ctp: %s reading the debug info of %s: its frames are named without file and "
		"line from now on\n",
		why == CTP_DWARF_OUT_OF_MEMORY
			? "libdw ran out of memory"
			: "libdw crashed (out of memory, or a debug file changed as it read it)",
		m->path);
}

static void resolve(struct module *m, uint64_t vaddr, bool return_address,
		    struct ctp_frame_info *out)
{
	*out = (struct ctp_frame_info){0};
	out->sym = ctp_symtab_lookup(m->symtab, vaddr, &out->off);
	/* A return address right after a call that never returns (abort, a throw) is the first
	 * byte of the next function, or past the end of the caller: the caller is the function
	 * holding the call, pc - 1. The offset stays that of pc. */
	if (return_address && vaddr > 0 && (out->sym == NULL || out->off == 0)) {
		uint64_t off;
		const char *caller = ctp_symtab_lookup(m->symtab, vaddr - 1, &off);
		if (caller != NULL) {
			out->sym = caller;
			out->off = off + 1;
		}
	}
	if (m->dwarf != NULL && !m->dwarf_lost) {
		uint64_t at = return_address && vaddr > 0 ? vaddr - 1 : vaddr;
		enum ctp_dwarf_answer a =
			ctp_dwarf_line_guarded(m->dwarf, at, &out->file, &out->line);
		if (a != CTP_DWARF_FOUND) {
			out->file = NULL;
			out->line = 0;
		}
		if (a == CTP_DWARF_OUT_OF_MEMORY || a == CTP_DWARF_FAULT)
			dwarf_lost(m, a);
	}
}

bool ctp_symbolize(struct ctp_symbolizer *s, const char *module_path, const uint8_t *build_id,
		   size_t build_id_len, uint64_t load_bias, uint64_t pc, bool return_address,
		   struct ctp_frame_info *out)
{
	*out = (struct ctp_frame_info){0};
	if (s == NULL || module_path == NULL)
		return false;
	struct module *m = module_get(s, module_path, build_id, build_id_len);
	if (m == NULL || !m->usable)
		return false;
	uint64_t vaddr = m->relocatable ? pc - load_bias : pc;
	if (vaddr == 0 || vaddr >> 63)
		return true; /* below the load address: nothing there, but the module is known */

	uint64_t key = vaddr << 1 | (return_address ? 1 : 0);
	bool found = false;
	struct addr_entry *e = addr_lookup(m, key, &found);
	if (e != NULL && found) {
		*out = e->info;
		return true;
	}
	resolve(m, vaddr, return_address, out);
	if (e != NULL) {
		e->key = key;
		e->info = *out;
		m->addrs_used++;
	}
	return true;
}

const char *ctp_frame_place(char *buf, size_t size, const char *module_path, bool in_module,
			    uint64_t module_off, uint64_t pc)
{
	const char *file = module_path ? strrchr(module_path, '/') : NULL;
	file = file ? file + 1 : module_path;
	if (file && *file && in_module)
		snprintf(buf, size, "%s+0x%" PRIx64, file, module_off);
	else
		snprintf(buf, size, "0x%" PRIx64, pc);
	return buf;
}

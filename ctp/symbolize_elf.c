/* ELF side of the symbolizer: opening files, build-ids, separate debug files, and the sorted
 * function symbol table that maps an address to the function containing it. */
#include "ctp/symbolize_internal.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* From libstdc++ (the C++ ABI), linked into every user of ctp_symbolize. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

bool ctp_elf_file_open(struct ctp_elf_file *f, const char *path)
{
	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return false;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (f->elf == NULL || elf_kind(f->elf) != ELF_K_ELF) {
		ctp_elf_file_close(f);
		return false;
	}
	return true;
}

void ctp_elf_file_close(struct ctp_elf_file *f)
{
	if (f->elf != NULL)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

size_t ctp_elf_build_id(Elf *elf, const uint8_t **id)
{
	const void *p = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);
	if (n <= 0)
		return 0;
	*id = p;
	return (size_t)n;
}

bool ctp_elf_debug_file_open(struct ctp_elf_file *f, const char *dir, const uint8_t *id,
			     size_t id_len)
{
	f->fd = -1;
	f->elf = NULL;
	if (id_len < 2 || id_len > 64)
		return false;
	char path[4096];
	size_t dir_len = strlen(dir);
	/* dir, "/.build-id/xx/", the rest of the id in hex, ".debug" and the NUL */
	if (dir_len + 14 + 2 * (id_len - 1) + 7 > sizeof(path))
		return false;
	int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", dir, id[0]);
	for (size_t i = 1; i < id_len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", id[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
	return ctp_elf_file_open_checked(f, path, id, id_len);
}

bool ctp_elf_file_open_checked(struct ctp_elf_file *f, const char *path, const uint8_t *id,
			       size_t id_len)
{
	if (!ctp_elf_file_open(f, path))
		return false;
	const uint8_t *own;
	size_t own_len = ctp_elf_build_id(f->elf, &own);
	if (own_len != id_len || memcmp(own, id, id_len) != 0) {
		ctp_elf_file_close(f);
		return false;
	}
	return true;
}

struct ctp_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
	uint32_t rank;	/* lower is the better name among aliases at one address */
	bool sized;	/* end comes from st_size, not from a guess */
	bool demangled; /* name has been demangled (and is then owned if it changed) */
	bool owned;
};

struct ctp_symtab {
	struct ctp_sym *syms;
	size_t count;
};

/* Among aliases of one address, prefer what a programmer wrote: a global name over a local
 * one, then fewer leading underscores (getpid over __getpid), then strong over weak. */
static uint32_t sym_rank(const GElf_Sym *sym, const char *name)
{
	uint32_t underscores = 0;
	while (name[underscores] == '_' && underscores < 255)
		underscores++;
	uint32_t local = GELF_ST_BIND(sym->st_info) == STB_LOCAL;
	uint32_t weak = GELF_ST_BIND(sym->st_info) == STB_WEAK;
	return local << 16 | underscores << 8 | weak;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct ctp_sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* End of the section holding a symbol: the most a symbol without a size can cover. */
static uint64_t section_end(Elf *elf, size_t shndx)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	if (scn == NULL || gelf_getshdr(scn, &shdr) == NULL)
		return UINT64_MAX;
	return shdr.sh_addr + shdr.sh_size;
}

static Elf_Scn *find_section(Elf *elf, uint32_t sh_type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, shdr) != NULL && shdr->sh_type == sh_type)
			return scn;
	}
	return NULL;
}

/* Keeps one entry per start address (the best ranked name; a known size wins over a guess),
 * then stops each symbol without a size at the next symbol. Assembly functions often have no
 * size; giving them none would lose them, giving them everything up to the next symbol is what
 * the layout of the section says at best. */
static void merge_aliases(struct ctp_symtab *t)
{
	size_t out = 0;
	for (size_t i = 0; i < t->count; i++) {
		struct ctp_sym *s = &t->syms[i];
		struct ctp_sym *kept = out > 0 ? &t->syms[out - 1] : NULL;
		if (kept != NULL && kept->start == s->start) {
			if (s->sized && (!kept->sized || s->end > kept->end)) {
				kept->end = s->end;
				kept->sized = true;
			} else if (!s->sized && !kept->sized && s->end > kept->end) {
				kept->end = s->end;
			}
			continue;
		}
		t->syms[out++] = *s;
	}
	t->count = out;
	for (size_t i = 0; i < t->count; i++) {
		struct ctp_sym *s = &t->syms[i];
		if (s->sized)
			continue;
		if (i + 1 < t->count && t->syms[i + 1].start < s->end)
			s->end = t->syms[i + 1].start;
		if (s->end == UINT64_MAX || s->end <= s->start)
			s->end = s->start + 1; /* nothing bounds it: only its own address */
	}
}

struct ctp_symtab *ctp_symtab_load(Elf *elf, uint32_t sh_type)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(elf, sh_type, &shdr);
	if (scn == NULL || shdr.sh_entsize == 0)
		return NULL;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (data == NULL)
		return NULL;
	size_t n = shdr.sh_size / shdr.sh_entsize;
	struct ctp_symtab *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	if (t->syms == NULL) {
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (gelf_getsym(data, (int)i, &sym) == NULL)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		struct ctp_sym *s = &t->syms[t->count++];
		s->start = sym.st_value;
		s->sized = sym.st_size != 0;
		s->end = s->sized ? sym.st_value + sym.st_size : section_end(elf, sym.st_shndx);
		s->name = name;
		s->rank = sym_rank(&sym, name);
	}
	if (t->count == 0) {
		ctp_symtab_free(t);
		return NULL;
	}
	qsort(t->syms, t->count, sizeof(*t->syms), sym_cmp);
	merge_aliases(t);
	return t;
}

void ctp_symtab_free(struct ctp_symtab *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->count; i++) {
		if (t->syms[i].owned)
			free((char *)t->syms[i].name);
	}
	free(t->syms);
	free(t);
}

/* The name as a programmer knows it: without the symbol version that .symtab keeps for
 * versioned definitions (pthread_create@@GLIBC_2.34), demangled where it is C++. Done on first
 * use: most symbols of a module are never asked for. */
static const char *display_name(struct ctp_sym *s)
{
	if (s->demangled)
		return s->name;
	s->demangled = true;
	const char *at = strchr(s->name, '@');
	char *base = at != NULL ? strndup(s->name, (size_t)(at - s->name)) : NULL;
	const char *plain = base != NULL ? base : s->name;
	char *d = NULL;
	if (plain[0] == '_' && plain[1] == 'Z') {
		int status = -1;
		d = __cxa_demangle(plain, NULL, NULL, &status);
		if (d != NULL && status != 0) {
			free(d);
			d = NULL;
		}
	}
	if (d != NULL) {
		free(base);
		s->name = d;
		s->owned = true;
	} else if (base != NULL) {
		s->name = base;
		s->owned = true;
	}
	return s->name;
}

/* How far back to look for an enclosing symbol when the nearest one below ends too early
 * (a sized symbol nested inside a bigger one). */
#define CTP_SYMTAB_NEST_SCAN 8

const char *ctp_symtab_lookup(struct ctp_symtab *t, uint64_t vaddr, uint64_t *off)
{
	if (t == NULL)
		return NULL;
	/* The last symbol starting at or below vaddr. */
	size_t lo = 0, hi = t->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < CTP_SYMTAB_NEST_SCAN && lo > 0; k++, lo--) {
		struct ctp_sym *s = &t->syms[lo - 1];
		if (vaddr < s->end) {
			*off = vaddr - s->start;
			return display_name(s);
		}
	}
	return NULL;
}

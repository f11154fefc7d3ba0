#define _GNU_SOURCE
#include "ctp/core_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/reg.h>
#include <unistd.h>

#include "ctp/xalloc.h"

/* Only x86-64 cores: the registers below are its elf_gregset_t. */
static bool read_prstatus(struct ctp_core *c, const uint8_t *desc, size_t len)
{
	struct elf_prstatus st;
	if (len < sizeof(st))
		return false;
	memcpy(&st, desc, sizeof(st));
	const unsigned long long *g = (const unsigned long long *)st.pr_reg;
	c->threads = ctp_xrealloc(c->threads, (c->nthreads + 1) * sizeof(*c->threads));
	c->threads[c->nthreads++] = (struct ctp_core_thread){
		.tid = (uint32_t)st.pr_pid,
		.signal = st.pr_cursig,
		.regs =
			{
				.rip = g[RIP],
				.rsp = g[RSP],
				.rbp = g[RBP],
				.rbx = g[RBX],
				.r12 = g[R12],
				.r13 = g[R13],
				.r14 = g[R14],
				.r15 = g[R15],
			},
	};
	/* The kernel writes the thread that took the signal first. */
	if (c->nthreads == 1) {
		c->signal = st.pr_cursig;
		c->pid = (uint32_t)st.pr_pid;
		c->ppid = (uint32_t)st.pr_ppid;
	}
	return true;
}

static void read_prpsinfo(struct ctp_core *c, const uint8_t *desc, size_t len)
{
	struct elf_prpsinfo ps;
	if (len < sizeof(ps))
		return;
	memcpy(&ps, desc, sizeof(ps));
	memcpy(c->fname, ps.pr_fname, sizeof(ps.pr_fname));
	c->fname[sizeof(ps.pr_fname)] = '\0';
	memcpy(c->psargs, ps.pr_psargs, sizeof(ps.pr_psargs));
	c->psargs[sizeof(ps.pr_psargs)] = '\0';
	/* The arguments end with a space when the command line was longer than the field. */
	for (size_t n = strlen(c->psargs); n > 0 && c->psargs[n - 1] == ' '; n--)
		c->psargs[n - 1] = '\0';
	if (ps.pr_pid > 0)
		c->pid = (uint32_t)ps.pr_pid;
	if (ps.pr_ppid > 0)
		c->ppid = (uint32_t)ps.pr_ppid;
}

/* NT_FILE: count, page size, count x {start, end, page offset}, then count NUL-ended paths. */
static bool read_nt_file(struct ctp_core *c, const uint8_t *desc, size_t len)
{
	uint64_t head[2];
	if (len < sizeof(head))
		return false;
	memcpy(head, desc, sizeof(head));
	uint64_t count = head[0], page = head[1];
	if (count > len / 24 || len - 16 < count * 24)
		return false;
	const uint8_t *names = desc + 16 + count * 24, *end = desc + len;
	c->map_names = ctp_xcalloc(1, (size_t)(end - names) + 1);
	memcpy(c->map_names, names, (size_t)(end - names));
	c->maps = ctp_xcalloc(count ? count : 1, sizeof(*c->maps));
	const char *name = c->map_names, *names_end = c->map_names + (end - names);
	for (uint64_t i = 0; i < count && name < names_end; i++) {
		uint64_t e[3];
		memcpy(e, desc + 16 + i * 24, sizeof(e));
		c->maps[c->nmaps++] = (struct ctp_core_mapping){
			.start = e[0], .end = e[1], .file_off = e[2] * page, .path = name};
		name += strlen(name) + 1;
	}
	return true;
}

static void read_auxv(struct ctp_core *c, const uint8_t *desc, size_t len)
{
	for (size_t off = 0; off + 16 <= len; off += 16) {
		uint64_t kv[2];
		memcpy(kv, desc + off, sizeof(kv));
		if (kv[0] == AT_ENTRY)
			c->entry = kv[1];
	}
}

static bool read_notes(struct ctp_core *c, Elf *elf, const GElf_Phdr *ph)
{
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	if (!d)
		return false;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
		const char *name = (const char *)d->d_buf + name_off;
		off = next;
		if (nh.n_namesz != 5 || memcmp(name, "CORE", 5) != 0)
			continue;
		switch (nh.n_type) {
		case NT_PRSTATUS:
			read_prstatus(c, desc, nh.n_descsz);
			break;
		case NT_PRPSINFO:
			read_prpsinfo(c, desc, nh.n_descsz);
			break;
		case NT_FILE:
			if (!c->maps)
				read_nt_file(c, desc, nh.n_descsz);
			break;
		case NT_AUXV:
			read_auxv(c, desc, nh.n_descsz);
			break;
		}
	}
	return true;
}

static enum ctp_core_status not_core(struct ctp_core *c, const char *what, const char *path,
				     char *why, size_t why_len)
{
	snprintf(why, why_len, "%s is not a core file: %s", path, what);
	ctp_core_close(c);
	return CTP_CORE_NOT_CORE;
}

enum ctp_core_status ctp_core_open(const char *path, struct ctp_core *c, char *why, size_t why_len)
{
	memset(c, 0, sizeof(*c));
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
		return CTP_CORE_CANNOT_OPEN;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	c->elf = elf;
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return not_core(c, "not ELF", path, why, why_len);
	if (eh.e_type != ET_CORE)
		return not_core(c, "an ELF file, but not a core (a program or a library?)", path,
				why, why_len);
	if (eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return not_core(c, "a core of another machine than x86-64", path, why, why_len);
	size_t raw_size;
	c->raw = (const uint8_t *)elf_rawfile(elf, &raw_size);
	c->raw_size = raw_size;
	size_t nph;
	if (!c->raw || elf_getphdrnum(elf, &nph) != 0)
		return not_core(c, "no program headers", path, why, why_len);
	/* libelf reports no program headers at all when they do not fit in the file. */
	uint64_t phnum = eh.e_phnum == PN_XNUM ? nph : eh.e_phnum;
	if (eh.e_phoff > raw_size || phnum * eh.e_phentsize > raw_size - eh.e_phoff) {
		snprintf(why, why_len,
			 "%s is truncated: it ends within its program headers (was the disk full, "
			 "or "
			 "ulimit -c too small, when it was written?)",
			 path);
		ctp_core_close(c);
		return CTP_CORE_TRUNCATED;
	}
	bool notes = false, notes_cut = false;
	c->loads = ctp_xcalloc(nph ? nph : 1, sizeof(*c->loads));
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return not_core(c, "a program header cannot be read", path, why, why_len);
		if (ph.p_type == PT_LOAD) {
			c->truncated |=
				ph.p_offset > raw_size || ph.p_filesz > raw_size - ph.p_offset;
			c->loads[c->nloads++] = (struct ctp_core_load){
				.vaddr = ph.p_vaddr,
				.memsz = ph.p_memsz,
				.offset = ph.p_offset,
				.filesz = ph.p_filesz,
			};
		} else if (ph.p_type == PT_NOTE) {
			if (ph.p_offset > raw_size || ph.p_filesz > raw_size - ph.p_offset)
				notes_cut = true;
			else
				notes |= read_notes(c, elf, &ph);
		}
	}
	if (notes_cut && !c->nthreads) {
		snprintf(why, why_len,
			 "%s is truncated: it ends before its notes (was the disk full, or ulimit "
			 "-c "
			 "too small, when it was written?)",
			 path);
		ctp_core_close(c);
		return CTP_CORE_TRUNCATED;
	}
	if (!notes || !c->nthreads)
		return not_core(c, "no process status note (NT_PRSTATUS)", path, why, why_len);
	return CTP_CORE_OK;
}

void ctp_core_close(struct ctp_core *c)
{
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->loads);
	free(c->maps);
	free(c->map_names);
	free(c->threads);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static const struct ctp_core_load *load_at(const struct ctp_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nloads; i++) {
		const struct ctp_core_load *l = &c->loads[i];
		if (addr >= l->vaddr && addr - l->vaddr < l->memsz)
			return l;
	}
	return NULL;
}

enum ctp_core_range ctp_core_copy(const struct ctp_core *c, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len > 0) {
		const struct ctp_core_load *l = load_at(c, addr);
		if (!l)
			return CTP_CORE_RANGE_UNMAPPED;
		uint64_t in = addr - l->vaddr;
		uint64_t n = l->memsz - in < len ? l->memsz - in : len;
		/* Bytes past filesz were not written (a mapping coredump_filter left out). */
		if (in + n > l->filesz)
			return CTP_CORE_RANGE_NOT_DUMPED;
		if (l->offset > c->raw_size || in + n > c->raw_size - l->offset)
			return CTP_CORE_RANGE_TRUNCATED;
		if (out) {
			memcpy(out, c->raw + l->offset + in, n);
			out += n;
		}
		addr += n;
		len -= n;
	}
	return CTP_CORE_RANGE_PRESENT;
}

bool ctp_read_core_memory(void *arg, uint64_t addr, void *buf, size_t len)
{
	return ctp_core_copy(arg, addr, buf, len) == CTP_CORE_RANGE_PRESENT;
}

const struct ctp_core_mapping *ctp_core_mapping_at(const struct ctp_core *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nmaps; i++)
		if (addr >= c->maps[i].start && addr < c->maps[i].end)
			return &c->maps[i];
	return NULL;
}

const char *ctp_core_executable(const struct ctp_core *c)
{
	const struct ctp_core_mapping *m = c->entry ? ctp_core_mapping_at(c, c->entry) : NULL;
	return m ? m->path : NULL;
}

const struct ctp_core_thread *ctp_core_thread(const struct ctp_core *c, uint32_t tid)
{
	for (size_t i = 0; i < c->nthreads; i++)
		if (c->threads[i].tid == tid)
			return &c->threads[i];
	return NULL;
}

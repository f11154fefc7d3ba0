/* The module table: every loaded object with its load bias, range and build-id, so that the
 * collector can symbolize after the process is gone.
 *
 * dlopen is not hooked: glibc searches a library with its caller's RUNPATH and namespace, and a
 * wrapper would make the preload the caller. Instead the loader's own count of objects loaded
 * (dl_iterate_phdr's dlpi_adds, which dlmopen namespaces count too) is compared at the moments
 * that matter: before libunwind walks a stack, when a thread starts or a coroutine starts in
 * code outside the module of the last one, and when the process ends. The table is rescanned
 * only when it changed. A stack served by the stack memo instead of a walk holds the return
 * addresses of a stack walked before, whose modules that walk's look found. (A look at every
 * coroutine's making cost pdns-recursor 200 instructions a query: dl_iterate_phdr takes the
 * loader's lock.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/segment.h"
#include "preload/fork_guard.h"
#include "preload/modules.h"
#include "preload/object_range.h"
#include "preload/segment.h"

enum { MODULES_PER_CHUNK = 256 };

static struct ctp_module_chunk *current_chunk;
static void fill_modules(void *block, uint64_t off, void *arg)
{
	(void)off;
	(void)arg;
	struct ctp_module_chunk *c = block;
	c->capacity = MODULES_PER_CHUNK;
	c->count = 0;
}

static bool known(uint64_t base, const char *path)
{
	uint64_t off = CTP_LOAD_ACQUIRE(&ctp_seg.hdr->blocks_head);
	while (off) {
		struct ctp_block *b = ctp_segment_ptr(off);
		if (b->kind == CTP_BLOCK_MODULES) {
			struct ctp_module_chunk *c = (struct ctp_module_chunk *)b;
			for (uint32_t i = 0; i < c->count; i++)
				if (c->modules[i].base == base &&
				    strncmp(c->modules[i].path, path, CTP_MODULE_PATH_MAX - 1) == 0)
					return true;
		}
		off = b->next;
	}
	return false;
}

static struct ctp_module *next_entry(void)
{
	if (!current_chunk || current_chunk->count == current_chunk->capacity) {
		uint64_t off = ctp_segment_alloc_block(CTP_BLOCK_MODULES,
						       sizeof(struct ctp_module_chunk) +
							       MODULES_PER_CHUNK *
								       sizeof(struct ctp_module),
						       fill_modules, NULL);
		if (!off)
			return NULL;
		current_chunk = ctp_segment_ptr(off);
	}
	return &current_chunk->modules[current_chunk->count];
}

static void read_build_id(const struct dl_phdr_info *info, struct ctp_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*n);
			const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= CTP_BUILD_ID_MAX) {
				memcpy(m->build_id, desc, n->n_descsz);
				m->build_id_len = n->n_descsz;
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	char path[CTP_MODULE_PATH_MAX];
	const char *name = info->dlpi_name;
	if (!name || !*name) {
		/* The main program: its name is empty here. */
		ssize_t n = syscall(SYS_readlink, "/proc/self/exe", path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = 0;
	} else {
		strncpy(path, name, sizeof(path) - 1);
		path[sizeof(path) - 1] = 0;
	}
	if (known(info->dlpi_addr, path))
		return 0;
	uint64_t lo, hi;
	if (!ctp_object_range(info, &lo, &hi))
		return 0;
	struct ctp_module *m = next_entry();
	if (!m)
		return 1;
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->lo = lo;
	m->hi = hi;
	memcpy(m->path, path, sizeof(m->path));
	read_build_id(info, m);
	/* Release: the entry is complete before the collector counts it. */
	CTP_STORE_RELEASE(&current_chunk->count, current_chunk->count + 1);
	return 0;
}

static int scan_lock;
static unsigned long long scanned_adds; /* dlpi_adds when the table was last brought up to date */

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the counter is the same in every entry: one is enough */
}

void ctp_modules_scan(void)
{
	/* Never wait: a scan under way on another thread covers what this one would find. */
	if (__atomic_exchange_n(&scan_lock, 1, __ATOMIC_ACQUIRE))
		return;
	/* Nor during a fork: the next start scans again. */
	if (!ctp_fork_guard_try_enter()) {
		__atomic_store_n(&scan_lock, 0, __ATOMIC_RELEASE);
		return;
	}
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	if (adds != __atomic_load_n(&scanned_adds, __ATOMIC_RELAXED)) {
		dl_iterate_phdr(add_module, NULL);
		__atomic_store_n(&scanned_adds, adds, __ATOMIC_RELAXED);
	}
	ctp_fork_guard_leave();
	__atomic_store_n(&scan_lock, 0, __ATOMIC_RELEASE);
}

/* The module that held the last entry looked up; entries never change once published. */
static const struct ctp_module *code_module;

static const struct ctp_module *module_holding(uint64_t addr)
{
	uint64_t off = CTP_LOAD_ACQUIRE(&ctp_seg.hdr->blocks_head);
	while (off) {
		struct ctp_block *b = ctp_segment_ptr(off);
		if (b->kind == CTP_BLOCK_MODULES) {
			struct ctp_module_chunk *c = (struct ctp_module_chunk *)b;
			uint32_t count = CTP_LOAD_ACQUIRE(&c->count);
			for (uint32_t i = 0; i < count; i++)
				if (addr >= c->modules[i].lo && addr < c->modules[i].hi)
					return &c->modules[i];
		}
		off = b->next;
	}
	return NULL;
}

void ctp_modules_note_code(uint64_t addr)
{
	const struct ctp_module *m = __atomic_load_n(&code_module, __ATOMIC_ACQUIRE);
	if (m && addr >= m->lo && addr < m->hi)
		return;
	ctp_modules_scan();
	m = module_holding(addr);
	if (m)
		__atomic_store_n(&code_module, m, __ATOMIC_RELEASE);
}

void ctp_modules_fork_child(void)
{
	/* A scan that another thread had under way at the fork never ends in the child. */
	__atomic_store_n(&scan_lock, 0, __ATOMIC_RELAXED);
}

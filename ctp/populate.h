/* Mapping memory about to be written through, in one call instead of one page fault per page.
 * A fault costs ~13 us on a small VM whose kernel isolates its page tables without PCID; the
 * whole of MADV_POPULATE_WRITE, with the later first touch, ~3.5 us a page. Kernels before 5.14
 * refuse the advice, and the pages then fault in as they are written: nothing else changes.
 * ctp_populate_write is used by the preload's rings; ctp_map_populated by the collector's spool
 * and reorder queue for memory of their own. */
#ifndef CTP_POPULATE_H
#define CTP_POPULATE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* The whole pages inside [p, p + len), mapped writable now; errno is kept. */
static inline void ctp_populate_write(void *p, size_t len)
{
	const uintptr_t page = 4096;
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + len) & ~(page - 1);
	if (to <= from)
		return;
	int saved_errno = errno;
	madvise((void *)from, to - from, MADV_POPULATE_WRITE);
	errno = saved_errno;
}

/* `len` bytes of new private memory, its pages mapped writable in the same call; NULL when there
 * is no room for it (an address-space limit sees every such mapping, whatever the allocator). */
static inline void *ctp_map_populated(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

#endif

/* The address range a loaded object's PT_LOAD segments cover, from dl_iterate_phdr's view of it:
 * used to name a module, to know which library a call comes from. */
#ifndef CTP_PRELOAD_OBJECT_RANGE_H
#define CTP_PRELOAD_OBJECT_RANGE_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* [*lo, *hi); false when the object has no loadable segment. */
static inline bool ctp_object_range(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < *lo)
			*lo = a;
		if (a + ph->p_memsz > *hi)
			*hi = a + ph->p_memsz;
	}
	return *hi > *lo;
}

#endif

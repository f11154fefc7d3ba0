/* A snapshot's source from a core file (ctp-pstack --core CORE [EXE]). The segment is the memfd
 * the preload maps, in one or more extents (it grows): the core's NT_FILE note says which
 * addresses map which bytes of "/memfd:ctp-segment", and the default coredump_filter writes
 * them (a memfd is shared memory without links, "anonymous shared", bit 1). The segment's bytes
 * are copied out of the core into one buffer, which the bounds-checked view reads as it reads a
 * live mapping. */
#ifndef CTP_PSTACK_CORE_SOURCE_H
#define CTP_PSTACK_CORE_SOURCE_H

#include <stddef.h>

#include "pstack/source.h"

/* Opens core `path` (of the program `executable`, or NULL for the file the core names) and
 * copies its segment out. Returns PSTACK_EXIT_OK, or another status with a message for the user
 * in `why`. */
enum pstack_exit pstack_open_core(const char *path, const char *executable,
				  struct pstack_source *out, char *why, size_t why_len);

void pstack_core_close(struct pstack_source *src);

#endif

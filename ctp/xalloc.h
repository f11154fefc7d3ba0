/* Memory for the tables of the programs that read segments (the collector, ctp-pstack). Running
 * out is fatal, once the reserve a program may keep for it (the collector does) is spent: a
 * collector that went on with a table it could not grow would write a trace that silently
 * lacks what did not fit. */
#ifndef CTP_XALLOC_H
#define CTP_XALLOC_H

#include <stddef.h>

/* Keeps `bytes` of address space aside (mapped, never touched: it costs no memory), given back
 * the first time an allocation here fails, which is then tried again. Under an address-space
 * limit (ulimit -v) the collector's tables need little, and the rings, spool and libdw much:
 * a table that could not grow by 256 bytes was the collector's end (with the trace's), while
 * what it does without room elsewhere (spool chunks, the reorder queue, libdw) it survives. */
void ctp_xalloc_reserve(size_t bytes);

/* realloc, or a message on stderr and abort(). */
void *ctp_xrealloc(void *p, size_t n);
/* calloc, or a message on stderr and abort(). */
void *ctp_xcalloc(size_t count, size_t size);

#endif

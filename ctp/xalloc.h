/* Memory for the tables of the programs that read segments (the collector, ctp-pstack). Running
 * out is fatal: a collector that went on with a table it could not grow would write a trace
 * that silently lacks what did not fit. */
#ifndef CTP_XALLOC_H
#define CTP_XALLOC_H

#include <stddef.h>

/* realloc, or a message on stderr and abort(). */
void *ctp_xrealloc(void *p, size_t n);
/* calloc, or a message on stderr and abort(). */
void *ctp_xcalloc(size_t count, size_t size);

#endif

#include "collector/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

void *ctp_xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fputs("ctp-collector: out of memory\n", stderr);
		abort();
	}
	return p;
}

#include "collector/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

static void *checked(void *p)
{
	if (!p) {
		fputs("ctp-collector: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *ctp_xrealloc(void *p, size_t n)
{
	return checked(realloc(p, n));
}

void *ctp_xcalloc(size_t count, size_t size)
{
	return checked(calloc(count, size));
}

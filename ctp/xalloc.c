#define _GNU_SOURCE /* program_invocation_short_name */
#include "ctp/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static void *checked(void *p)
{
	if (!p) {
		/* The program's own name: the collector and ctp-pstack share this. */
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
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

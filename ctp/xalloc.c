#define _GNU_SOURCE /* program_invocation_short_name */
#include "ctp/xalloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* The reserve (ctp_xalloc_reserve): mapped, never touched, given back at the first failure. */
static void *reserve;
static size_t reserve_bytes;

void ctp_xalloc_reserve(size_t bytes)
{
	void *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return;
	reserve_bytes = bytes;
	__atomic_store_n(&reserve, r, __ATOMIC_RELEASE);
}

/* Gives the reserve back, once: whether this call did (the failed allocation is worth trying
 * again). */
static bool give_back_reserve(void)
{
	void *r = __atomic_exchange_n(&reserve, NULL, __ATOMIC_ACQ_REL);
	if (r == NULL)
		return false;
	munmap(r, reserve_bytes);
	fprintf(stderr,
		"%s: out of memory: it goes on with the %zu MiB it kept for this, and stops if "
		"those run out too\n",
		program_invocation_short_name, reserve_bytes >> 20);
	return true;
}

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
	void *q = realloc(p, n);
	if (q == NULL && give_back_reserve())
		q = realloc(p, n);
	return checked(q);
}

void *ctp_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count, size);
	if (p == NULL && give_back_reserve())
		p = calloc(count, size);
	return checked(p);
}

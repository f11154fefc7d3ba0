/* The collector under an address-space limit (ulimit -v, RLIMIT_AS): it inherits the traced
 * program's limits, and a limit set for the program must not make the collector run out of
 * memory in the middle of a trace and lose it. The spool is the collector's one large use of
 * memory that it can bound itself (its records beyond the bound are dropped and counted), so
 * it is fitted into the room the limit leaves. */
#include "collector/address_space.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collector/spool.h"

/* The share of the room left for the spool: the rest is for what the collector cannot bound
 * beforehand. Most of it is the traced processes' segments, each mapped twice (by the harvester
 * and by the converter) and growing with the process's rings: six busy threads grow theirs to
 * 256 MiB. Then the debug information the symbolizer maps (a libc's alone is 10 MB), and the
 * threads' stacks. With a third for the spool, a 683 MiB limit left the segment's growth
 * unmapped in most runs; with an eighth, in few. */
#define SPOOL_SHARE_DIVISOR 8

uint64_t ctp_mapped_bytes_now(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long long pages = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t ctp_spool_bytes_within_address_space(uint64_t wanted)
{
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
		return wanted;
	/* A soft limit below the hard one is the program's to keep: ours may go up to the hard. */
	if (as.rlim_cur < as.rlim_max) {
		as.rlim_cur = as.rlim_max;
		if (setrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
			return wanted;
	}
	uint64_t mapped = ctp_mapped_bytes_now();
	uint64_t room = as.rlim_cur > mapped ? as.rlim_cur - mapped : 0;
	uint64_t fits = room / SPOOL_SHARE_DIVISOR / CTP_SPOOL_CHUNK * CTP_SPOOL_CHUNK;
	if (fits < 4 * (uint64_t)CTP_SPOOL_CHUNK)
		fits = 4 * (uint64_t)CTP_SPOOL_CHUNK; /* the least a ring's turn needs */
	if (fits >= wanted)
		return wanted;
	fprintf(stderr,
		"ctp-collector: the address-space limit (ulimit -v, %llu MiB) leaves room for a "
		"spool of %llu MiB, not %llu (--spool-mb); records beyond it are dropped and "
		"counted\n",
		(unsigned long long)(as.rlim_cur >> 20), (unsigned long long)(fits >> 20),
		(unsigned long long)(wanted >> 20));
	return fits;
}

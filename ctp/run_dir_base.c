#include "ctp/run_dir_base.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool searchable_by_all(const char *dir)
{
	struct stat st;
	return stat(dir, &st) == 0 && (st.st_mode & S_IXOTH);
}

size_t ctp_run_dir_bases(const char *bases[CTP_RUN_DIR_BASES])
{
	const char *candidates[CTP_RUN_DIR_BASES] = {getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"),
						     "/tmp"};
	size_t n = 0;
	for (size_t i = 0; i < CTP_RUN_DIR_BASES; i++)
		if (candidates[i] && candidates[i][0] == '/')
			bases[n++] = candidates[i];
	if (geteuid() != 0)
		return n;
	/* Stable: the searchable ones first, each group in its own order. */
	const char *sorted[CTP_RUN_DIR_BASES];
	size_t m = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (searchable_by_all(bases[i]) == (pass == 0))
				sorted[m++] = bases[i];
	for (size_t i = 0; i < n; i++)
		bases[i] = sorted[i];
	return n;
}

/* libunwind's own fds. At its first walk libunwind opens a pipe, through which it checks that an
 * address is readable (it writes a byte from there). Opened like any pipe, its two fds would be
 * the lowest free ones: a traced program's first open() would get 5 instead of 3, and a program
 * that closes everything and dup2s onto those numbers would get libunwind's bytes in its own
 * files. So libunwind's pipe2 (it calls it through its PLT, which the preload's hook takes) moves
 * both ends high, as the preload's own fds are, and registers libunwind's own variables as own
 * fd slots: closefrom and close_range spare them, and a dup2 onto one moves it and updates
 * libunwind's copy. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "preload/compiler.h"
#include "preload/object_range.h"
#include "preload/own_fds.h"
#include "preload/real.h"
#include "preload/unwind.h"

static uintptr_t unwinder_lo, unwinder_hi;

struct find_object {
	const char *path;
	uint64_t lo, hi;
};

static int object_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find_object *f = arg;
	if (!info->dlpi_name || strcmp(info->dlpi_name, f->path) != 0)
		return 0;
	ctp_object_range(info, &f->lo, &f->hi);
	return 1;
}

void ctp_unwinder_note(const void *symbol)
{
	Dl_info info;
	if (!dladdr(symbol, &info) || !info.dli_fname)
		return;
	struct find_object f = {.path = info.dli_fname};
	dl_iterate_phdr(object_range, &f);
	if (f.hi > f.lo) {
		unwinder_lo = f.lo;
		unwinder_hi = f.hi;
	}
}

bool ctp_called_from_unwinder(const void *return_address)
{
	uintptr_t r = (uintptr_t)return_address;
	return r >= unwinder_lo && r < unwinder_hi;
}

CTP_EXPORT int pipe2(int fds[2], int flags)
{
	CTP_REAL(pipe2);
	int rc = real_pipe2(fds, flags);
	if (rc != 0 || !ctp_called_from_unwinder(__builtin_return_address(0)))
		return rc;
	int saved_errno = errno;
	for (int i = 0; i < 2; i++) {
		fds[i] = ctp_own_fd_move_high(fds[i]);
		ctp_own_fd_register(&fds[i]);
	}
	errno = saved_errno;
	return rc;
}

/* Whether the image an exec starts will load the preload. A connection handed over across the
 * exec (connection.c) stays open in the new image at a high fd, named by CTP_CONNECTION_FD; an
 * image that never loads the preload would keep both for good: a static program, one of another
 * ELF class or machine, one the kernel runs in secure-execution mode (set-user-ID or -group-ID
 * to someone else, file capabilities to gain), whose loader ignores LD_PRELOAD's paths. The
 * file's first bytes and program headers tell. A file that cannot be read (execute-only) or is
 * of a format the kernel hands to another loader (binfmt_misc) is taken as traceable: the
 * handover may then go unused, as before this check. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/exec_target.h"

#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#else
#error "the preload's ELF machine is not known here"
#endif

enum { MAX_PHDRS = 256 };

static long read_at(int fd, void *buf, size_t len, off_t off)
{
	return syscall(SYS_pread64, fd, buf, len, off);
}

/* Whether the ELF (or script) in fd loads a program interpreter of the preload's kind. */
static bool loads_interpreter(int fd)
{
	Elf64_Ehdr eh;
	long n = read_at(fd, &eh, sizeof(eh), 0);
	if (n >= 2 && memcmp(&eh, "#!", 2) == 0)
		return true;
	if (n < (long)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return true; /* not ELF, or unreadable: cannot tell */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != OWN_MACHINE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return false;
	for (unsigned i = 0; i < eh.e_phnum && i < MAX_PHDRS; i++) {
		Elf64_Phdr ph;
		if (read_at(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (long)sizeof(ph))
			return true;
		if (ph.p_type == PT_INTERP)
			return true;
	}
	return false; /* static */
}

/* Whether the kernel would run the file in secure-execution mode for this process, in which the
 * loader takes no LD_PRELOAD path. */
static bool secure_execution(int fd)
{
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) != 0)
		return false;
	uid_t euid = (uid_t)syscall(SYS_geteuid);
	if ((st.st_mode & S_ISUID) && st.st_uid != euid)
		return true;
	/* Without group execute, the set-group-ID bit means mandatory locking, not a group. */
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    st.st_gid != (gid_t)syscall(SYS_getegid))
		return true;
	/* File capabilities raise a process that does not have them all already (root has). */
	return euid != 0 && syscall(SYS_fgetxattr, fd, "security.capability", NULL, 0) > 0;
}

static bool fd_traceable(int fd)
{
	return loads_interpreter(fd) && !secure_execution(fd);
}

static bool path_traceable(int dirfd, const char *path, int at_flags)
{
	if (path[0] == 0 && (at_flags & AT_EMPTY_PATH))
		return fd_traceable(dirfd);
	int flags = O_RDONLY | O_CLOEXEC | ((at_flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0);
	int fd = (int)syscall(SYS_openat, dirfd, path, flags);
	if (fd < 0)
		return true; /* execute-only, or the exec will fail: cannot tell */
	bool traceable = fd_traceable(fd);
	syscall(SYS_close, fd);
	return traceable;
}

/* The first executable regular file named `file` in PATH, as execvp finds it (PATH unset: glibc's
 * default; an empty entry: the working directory). Traceable when none is found: the exec
 * fails, or finds what this search did not. */
static bool search_traceable(const char *file)
{
	const char *dirs = getenv("PATH");
	if (!dirs)
		dirs = "/bin:/usr/bin";
	size_t file_len = strlen(file);
	char candidate[PATH_MAX];
	for (const char *d = dirs;; d++) {
		const char *end = strchrnul(d, ':');
		size_t len = (size_t)(end - d);
		if (len + 1 + file_len < sizeof(candidate)) {
			memcpy(candidate, d, len);
			size_t at = len;
			if (len)
				candidate[at++] = '/';
			memcpy(candidate + at, file, file_len + 1);
			struct stat st;
			if (syscall(SYS_faccessat, AT_FDCWD, candidate, X_OK) == 0 &&
			    syscall(SYS_newfstatat, AT_FDCWD, candidate, &st, 0) == 0 &&
			    S_ISREG(st.st_mode))
				return path_traceable(AT_FDCWD, candidate, 0);
		}
		if (*end == 0)
			return true;
		d = end;
	}
}

bool ctp_exec_target_traceable(const struct ctp_exec_target *t)
{
	int saved = errno;
	bool traceable = t->search && !strchr(t->path, '/')
				 ? search_traceable(t->path)
				 : path_traceable(t->dirfd, t->path, t->at_flags);
	errno = saved;
	return traceable;
}

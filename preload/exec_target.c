/* Whether the image an exec starts will load the preload. A connection handed over across the
 * exec (connection.c) stays open in the new image at a high fd, named by CTP_CONNECTION_FD; an
 * image that never loads the preload would keep both for good: a static program, one of another
 * ELF class or machine, a script whose interpreter is one of those, one the kernel runs in
 * secure-execution mode (set-ID, a process whose real and effective ids differ, file
 * capabilities to gain), whose loader ignores LD_PRELOAD's paths. The file's mode, first bytes
 * and program headers tell. A file that cannot be read (execute-only, but not set-ID) or is of
 * a format the kernel hands to another loader (binfmt_misc) is taken as traceable: the handover
 * may then go unused. */
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

/* The kernel follows a script's #! to an interpreter this many times (BINPRM_MAX_RECURSION). */
enum { MAX_PHDRS = 256, MAX_INTERPRETERS = 4, HEAD_BYTES = 256 };

static long read_at(int fd, void *buf, size_t len, off_t off)
{
	return syscall(SYS_pread64, fd, buf, len, off);
}

static bool path_traceable(int dirfd, const char *path, int at_flags, int depth);

/* A script's interpreter: the path after "#!" in its first line (NUL-terminated in place). */
static const char *interpreter(char *head, long n)
{
	head[n < HEAD_BYTES ? n : HEAD_BYTES - 1] = 0;
	char *p = head + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	char *end = p;
	while (*end && *end != ' ' && *end != '\t' && *end != '\n')
		end++;
	*end = 0;
	return *p ? p : NULL;
}

/* Whether the file in fd loads a program interpreter of the preload's kind: an ELF with one, or
 * a script whose interpreter does. */
static bool loads_interpreter(int fd, int depth)
{
	char head[HEAD_BYTES];
	long n = read_at(fd, head, sizeof(head), 0);
	if (n >= 2 && memcmp(head, "#!", 2) == 0) {
		const char *interp = interpreter(head, n);
		return interp && depth < MAX_INTERPRETERS &&
		       path_traceable(AT_FDCWD, interp, 0, depth + 1);
	}
	Elf64_Ehdr eh;
	if (n < (long)sizeof(eh))
		return true; /* not ELF, or unreadable: cannot tell */
	memcpy(&eh, head, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return true; /* a format another loader runs (binfmt_misc): cannot tell */
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
 * loader takes no LD_PRELOAD path: when the new effective ids differ from the old real ones
 * (so any exec by a process whose real and effective users differ, set-ID bit or not), and,
 * as a proposed change has it, from the old effective ones; either way counts. File
 * capabilities raise a process whose real user is not root. */
static bool secure_execution(const struct stat *st, bool has_caps)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	if (syscall(SYS_getresuid, &ruid, &euid, &suid) != 0 ||
	    syscall(SYS_getresgid, &rgid, &egid, &sgid) != 0)
		return true;
	uid_t new_euid = (st->st_mode & S_ISUID) ? st->st_uid : euid;
	/* Without group execute, the set-group-ID bit means mandatory locking, not a group. */
	gid_t new_egid =
		(st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) ? st->st_gid : egid;
	return new_euid != ruid || new_euid != euid || new_egid != rgid || new_egid != egid ||
	       (has_caps && ruid != 0);
}

static bool has_file_caps(int fd, int dirfd, const char *path)
{
	if (fd >= 0)
		return syscall(SYS_fgetxattr, fd, "security.capability", NULL, 0) > 0;
	if (path[0] == '/' || dirfd == AT_FDCWD)
		return syscall(SYS_getxattr, path, "security.capability", NULL, 0) > 0;
	return false; /* relative to another directory, unreadable: cannot tell */
}

/* `depth`: interpreters followed so far. A file that is not regular, or is not there, is not
 * traceable: the exec fails. */
static bool path_traceable(int dirfd, const char *path, int at_flags, int depth)
{
	bool empty = path[0] == 0 && (at_flags & AT_EMPTY_PATH);
	struct stat st;
	if (syscall(SYS_newfstatat, dirfd, path, &st,
		    at_flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) != 0 ||
	    !S_ISREG(st.st_mode))
		return false;
	/* Non-blocking and not a controlling terminal, as a precaution: the file is regular. */
	int fd = empty ? dirfd
		       : (int)syscall(SYS_openat, dirfd, path,
				      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
					      ((at_flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	bool traceable;
	if (secure_execution(&st, has_file_caps(fd, dirfd, path)))
		traceable = false;
	else
		/* Execute-only (unreadable): static or dynamic, cannot tell. */
		traceable = fd < 0 || loads_interpreter(fd, depth);
	if (fd >= 0 && !empty)
		syscall(SYS_close, fd);
	return traceable;
}

/* Whether this process may execute path, by its effective ids as exec does (faccessat2;
 * faccessat, by the real ids, where the kernel has none). */
static bool executable(const char *path)
{
	long rc = syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS);
	if (rc != 0 && errno == ENOSYS)
		rc = syscall(SYS_faccessat, AT_FDCWD, path, X_OK);
	return rc == 0;
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
			if (executable(candidate) &&
			    syscall(SYS_newfstatat, AT_FDCWD, candidate, &st, 0) == 0 &&
			    S_ISREG(st.st_mode))
				return path_traceable(AT_FDCWD, candidate, 0, 0);
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
				 : path_traceable(t->dirfd, t->path, t->at_flags, 0);
	errno = saved;
	return traceable;
}

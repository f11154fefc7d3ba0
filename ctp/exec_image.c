/* What the image an exec starts will make of the preload (exec_image.h). Read the way the kernel
 * and the loader read it, with system calls alone: the preload asks from hooks that may run in a
 * vfork child, where libc's wrappers of its own hooked calls must not run. Its buffers are small
 * (about 1 KiB of stack in all): the hooks run on whatever stack the program execs from, a
 * coroutine's of a few KiB among them. */
#define _GNU_SOURCE
#include "ctp/exec_image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#else
#error "the preload's ELF machine is not known here"
#endif

/* The kernel reads a file's first HEAD_BYTES (BINPRM_BUF_SIZE): a "#!" line, and so a script's
 * interpreter's path, is no longer. It follows interpreters this many times (exec_binprm); one
 * more, and the exec fails with ELOOP. A name in a path is at most NAME_BYTES - 1 long. */
enum { MAX_PHDRS = 256, MAX_INTERPRETERS = 5, HEAD_BYTES = 256, NAME_BYTES = 256 };

/* Not a verdict: the file is a script, and its interpreter decides. */
enum { SCRIPT = -1 };

static long read_at(int fd, void *buf, size_t len, off_t off)
{
	return syscall(SYS_pread64, fd, buf, len, off);
}

/* A script's interpreter: the path after "#!" in its first line, into `out`. */
static bool script_interpreter(char *head, long n, char out[HEAD_BYTES])
{
	head[n < HEAD_BYTES ? n : HEAD_BYTES - 1] = 0;
	const char *p = head + 2;
	p += strspn(p, " \t");
	size_t len = strcspn(p, " \t\n");
	if (len == 0)
		return false;
	memcpy(out, p, len);
	out[len] = 0;
	return true;
}

/* The last name of a path. */
static const char *last_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Whether a loader's file name is glibc's loader for the preload's ELF class and machine, at
 * whatever path: /lib64, the multiarch directory, another glibc's. */
static bool own_loader(const char *name)
{
	return strcmp(name, LD_SO) == 0;
}

/* A file without a program interpreter: statically linked, unless it is a dynamic loader run as
 * a program (`ld.so ./app`, and ldd's way of listing a program's libraries), which the name it
 * was run by tells ("ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-musl-x86_64.so.1"). */
static enum ctp_exec_image no_interpreter(const char *path, bool own_kind)
{
	const char *name = last_name(path);
	if (strncmp(name, "ld-", 3) != 0 || !strstr(name, ".so"))
		return CTP_EXEC_IMAGE_STATIC;
	return own_kind && own_loader(name) ? CTP_EXEC_IMAGE_LOADS_PRELOAD
					    : CTP_EXEC_IMAGE_OTHER_LOADER;
}

/* Where an ELF's program headers are, of either class. */
struct elf_layout {
	bool is64;
	uint16_t machine;
	uint64_t phoff;
	unsigned phnum;
};

static bool elf_layout(const char *head, long n, struct elf_layout *l)
{
	if (head[EI_CLASS] == ELFCLASS64 && n >= (long)sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr eh;
		memcpy(&eh, head, sizeof(eh));
		*l = (struct elf_layout){true, eh.e_machine, eh.e_phoff, eh.e_phnum};
		return eh.e_phentsize == sizeof(Elf64_Phdr);
	}
	if (head[EI_CLASS] == ELFCLASS32 && n >= (long)sizeof(Elf32_Ehdr)) {
		Elf32_Ehdr eh;
		memcpy(&eh, head, sizeof(eh));
		*l = (struct elf_layout){false, eh.e_machine, eh.e_phoff, eh.e_phnum};
		return eh.e_phentsize == sizeof(Elf32_Phdr);
	}
	return false;
}

/* Program header i's type, file offset and size; false when it cannot be read. */
static bool program_header(int fd, const struct elf_layout *l, unsigned i, uint32_t *type,
			   uint64_t *offset, uint64_t *size)
{
	if (l->is64) {
		Elf64_Phdr ph;
		if (read_at(fd, &ph, sizeof(ph), (off_t)(l->phoff + (uint64_t)i * sizeof(ph))) !=
		    (long)sizeof(ph))
			return false;
		*type = ph.p_type;
		*offset = ph.p_offset;
		*size = ph.p_filesz;
		return true;
	}
	Elf32_Phdr ph;
	if (read_at(fd, &ph, sizeof(ph), (off_t)(l->phoff + (uint64_t)i * sizeof(ph))) !=
	    (long)sizeof(ph))
		return false;
	*type = ph.p_type;
	*offset = ph.p_offset;
	*size = ph.p_filesz;
	return true;
}

/* What the ELF whose first n bytes are `head`, run by `path`, asks of a loader. */
static enum ctp_exec_image elf_image(int fd, const char *head, long n, const char *path)
{
	struct elf_layout l;
	if (!elf_layout(head, n, &l))
		return CTP_EXEC_IMAGE_LOADS_PRELOAD; /* unusual headers: cannot tell */
	bool own_kind = l.is64 && l.machine == OWN_MACHINE;
	for (unsigned i = 0; i < l.phnum && i < MAX_PHDRS; i++) {
		uint32_t type;
		uint64_t offset, size;
		if (!program_header(fd, &l, i, &type, &offset, &size))
			return CTP_EXEC_IMAGE_LOADS_PRELOAD;
		if (type != PT_INTERP)
			continue;
		if (!own_kind)
			return CTP_EXEC_IMAGE_OTHER_LOADER;
		/* The path's end, NUL included, holds its last name. */
		char tail[NAME_BYTES];
		uint64_t len = size < sizeof(tail) - 1 ? size : sizeof(tail) - 1;
		if (size == 0 || read_at(fd, tail, len, (off_t)(offset + size - len)) != (long)len)
			return CTP_EXEC_IMAGE_LOADS_PRELOAD;
		tail[len] = 0;
		return own_loader(last_name(tail)) ? CTP_EXEC_IMAGE_LOADS_PRELOAD
						   : CTP_EXEC_IMAGE_OTHER_LOADER;
	}
	return no_interpreter(path, own_kind);
}

/* Whether the path alone names the file (fd is -1: the file could not be opened). */
static bool path_usable(int dirfd, const char *path)
{
	return path[0] == '/' || dirfd == AT_FDCWD;
}

static bool has_file_caps(int fd, int dirfd, const char *path)
{
	if (fd >= 0)
		return syscall(SYS_fgetxattr, fd, "security.capability", NULL, 0) > 0;
	if (path_usable(dirfd, path))
		return syscall(SYS_getxattr, path, "security.capability", NULL, 0) > 0;
	return false; /* relative to another directory, unreadable: cannot tell */
}

/* Whether the file lies on a file system mounted nosuid, where the kernel honours neither
 * set-ID bits nor file capabilities. */
static bool on_nosuid_mount(int fd, int dirfd, const char *path)
{
	struct statfs fs;
	long rc = fd >= 0		     ? syscall(SYS_fstatfs, fd, &fs)
		  : path_usable(dirfd, path) ? syscall(SYS_statfs, path, &fs)
					     : -1;
	return rc == 0 && (fs.f_flags & ST_NOSUID);
}

/* Whether the kernel runs the file in secure-execution mode for this process, and why: when the
 * new effective ids differ from the old real ones (so any exec by a process whose real and
 * effective ids differ, set-ID bit or not), and, as a proposed change has it, from the old
 * effective ones; either way counts. File capabilities raise a process whose real user is not
 * root. */
static enum ctp_exec_image secure_execution(const struct stat *st, int fd, int dirfd,
					    const char *path)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	if (syscall(SYS_getresuid, &ruid, &euid, &suid) != 0 ||
	    syscall(SYS_getresgid, &rgid, &egid, &sgid) != 0)
		return CTP_EXEC_IMAGE_IDS_DIFFER;
	bool nosuid = on_nosuid_mount(fd, dirfd, path);
	/* no_new_privs stops the set-ID bits only: capabilities still make the exec secure. */
	bool ids_honoured = !nosuid && syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1;
	bool set_uid = ids_honoured && (st->st_mode & S_ISUID);
	/* Without group execute, the set-group-ID bit means mandatory locking, not a group. */
	bool set_gid = ids_honoured && (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP);
	if (set_uid && (st->st_uid != ruid || st->st_uid != euid))
		return CTP_EXEC_IMAGE_SETUID;
	if (set_gid && (st->st_gid != rgid || st->st_gid != egid))
		return CTP_EXEC_IMAGE_SETGID;
	if (ruid != euid || rgid != egid)
		return CTP_EXEC_IMAGE_IDS_DIFFER;
	if (!nosuid && ruid != 0 && has_file_caps(fd, dirfd, path))
		return CTP_EXEC_IMAGE_CAPABILITIES;
	return CTP_EXEC_IMAGE_LOADS_PRELOAD;
}

/* One file of the chain: its verdict, or SCRIPT with its interpreter in `next`. */
static int one_file(int dirfd, const char *path, int at_flags, char next[HEAD_BYTES])
{
	bool empty = path[0] == 0 && (at_flags & AT_EMPTY_PATH);
	struct stat st;
	if (syscall(SYS_newfstatat, dirfd, path, &st,
		    at_flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) != 0 ||
	    !S_ISREG(st.st_mode))
		return CTP_EXEC_IMAGE_NO_FILE;
	/* Non-blocking and not a controlling terminal, as a precaution: the file is regular. */
	int fd = empty ? dirfd
		       : (int)syscall(SYS_openat, dirfd, path,
				      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
					      ((at_flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	char head[HEAD_BYTES];
	long n = fd >= 0 ? read_at(fd, head, sizeof(head), 0) : -1;
	int image;
	if (n >= 2 && memcmp(head, "#!", 2) == 0) {
		/* Linux ignores a script's own set-ID bits: its interpreter's count. */
		image = script_interpreter(head, n, next) ? SCRIPT : CTP_EXEC_IMAGE_NO_FILE;
	} else {
		/* What cannot be read (execute-only) or is not ELF (binfmt_misc) cannot tell. */
		bool elf = n >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0;
		image = elf ? elf_image(fd, head, n, path) : CTP_EXEC_IMAGE_LOADS_PRELOAD;
		/* No loader, or one that cannot take the preload: whatever the ids. */
		if (image == CTP_EXEC_IMAGE_LOADS_PRELOAD)
			image = secure_execution(&st, fd, dirfd, path);
	}
	if (fd >= 0 && !empty)
		syscall(SYS_close, fd);
	return image;
}

enum ctp_exec_image ctp_exec_image(int dirfd, const char *path, int at_flags,
				   char elf[CTP_EXEC_IMAGE_PATH_MAX])
{
	int saved = errno;
	char chain[2][HEAD_BYTES];
	const char *file = path;
	int image = CTP_EXEC_IMAGE_NO_FILE;
	for (int depth = 0; depth <= MAX_INTERPRETERS; depth++) {
		char *next = chain[depth % 2];
		image = one_file(dirfd, file, at_flags, next);
		if (image != SCRIPT)
			break;
		file = next;
		dirfd = AT_FDCWD;
		at_flags = 0;
		image = CTP_EXEC_IMAGE_NO_FILE; /* unless the interpreter is there */
	}
	if (elf) {
		size_t len = strnlen(file, CTP_EXEC_IMAGE_PATH_MAX - 1);
		memcpy(elf, file, len);
		elf[len] = 0;
	}
	errno = saved;
	return (enum ctp_exec_image)image;
}

/* Why the dynamic loader will not take the preload into the program ctp-run is about to start.
 * Such a program runs, untraced, and the trace comes out empty: without a word, a user reads
 * that as the tracer's failure. The reasons are ones the file itself shows: no dynamic loader
 * (statically linked), an ELF the 64-bit preload cannot join, or a privileged exec, for which
 * the loader ignores LD_PRELOAD's paths (AT_SECURE). Programs it starts are traced all the
 * same as long as their environment keeps LD_PRELOAD. */
#define _GNU_SOURCE
#include "collector/run.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The kernel follows at most this many "#!" interpreters before the ELF it runs. */
enum { MAX_INTERPRETERS = 4 };

/* The interpreter a "#!" line names, into buf; false when the file is no script. */
static bool script_interpreter(int fd, char *buf, size_t len)
{
	char line[256];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = '\0';
	char *p = line + 2;
	p += strspn(p, " \t");
	size_t word = strcspn(p, " \t\n");
	if (word == 0 || word >= len)
		return false;
	memcpy(buf, p, word);
	buf[word] = '\0';
	return true;
}

/* What in an ELF keeps the preload out, or NULL: read from its header and program headers. */
static const char *elf_problem(int fd)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return NULL; /* not ELF: execve decides, and ctp-run says what it said */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return "not an x86-64 program, and the preload is one (its loader may say so on "
		       "stderr)";
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == PN_XNUM)
		return NULL; /* unusual headers: no claim either way */
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph));
		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
			return NULL;
		if (ph.p_type == PT_INTERP)
			return NULL;
	}
	return "statically linked: no dynamic loader takes the preload in";
}

/* Whether executing the file st describes is a privileged exec, after which the loader ignores
 * LD_PRELOAD's paths: the set-user-ID or set-group-ID bit changing an id (the kernel honours the
 * bits unless the file system is mounted nosuid or no_new_privs is set), or file capabilities
 * granted to a user other than root. */
static const char *privileged_exec(int fd, const struct stat *st)
{
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return NULL;
	struct statvfs vfs;
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return NULL;
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		return "set-user-ID, and the dynamic loader ignores LD_PRELOAD for it";
	/* Set-group-ID counts only with group execute permission; without it the bit marks
	 * mandatory locking. */
	if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid())
		return "set-group-ID, and the dynamic loader ignores LD_PRELOAD for it";
	if (getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0)
		return "given file capabilities, and the dynamic loader ignores LD_PRELOAD for it";
	return NULL;
}

void ctp_run_warn_untraceable(const char *program)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", program);
	for (int depth = 0; depth <= MAX_INTERPRETERS; depth++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0) {
			if (fd >= 0)
				close(fd);
			return; /* execve will say what is wrong, not us */
		}
		char interpreter[sizeof(path)];
		/* Linux ignores the set-ID bits of scripts: only the interpreter's count. */
		if (script_interpreter(fd, interpreter, sizeof(interpreter))) {
			close(fd);
			memcpy(path, interpreter, sizeof(path));
			continue;
		}
		const char *why = privileged_exec(fd, &st);
		if (why == NULL)
			why = elf_problem(fd);
		close(fd);
		if (why == NULL)
			return;
		if (depth == 0)
			fprintf(stderr, "ctp-run: warning: %s is %s; it runs untraced", path, why);
		else
			fprintf(stderr,
				"ctp-run: warning: %s runs in %s, which is %s; it runs untraced",
				program, path, why);
		fputs(" (programs it starts are traced if LD_PRELOAD reaches them)\n", stderr);
		return;
	}
}

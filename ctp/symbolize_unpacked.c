/* Debug files kept with their sections decompressed, one per build-id, under the user's cache
 * directory ($CTP_CACHE_DIR, else $XDG_CACHE_HOME/ctp, else ~/.cache/ctp; CTP_CACHE_DIR set
 * and empty: no cache), as perf keeps copies of binaries in ~/.debug.
 *
 * Why: libdw decompresses every compressed DWARF section of a file when it opens it, whatever
 * is asked of it later. Debian's debug files are compressed: libc6-dbg's are 10 MB of DWARF
 * once inflated, which cost the collector 70-90 ms of CPU and some 2,500 page faults in every
 * traced run whose stacks reach into libc (each thread's and ucontext coroutine's do), against
 * under 1 ms to open the inflated copy, whose pages are only read where a lookup goes. */
#define _GNU_SOURCE /* mkostemp */
#include "ctp/symbolize_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

bool ctp_elf_dwarf_compressed(Elf *elf)
{
	size_t shstrndx;
	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) == NULL || !(shdr.sh_flags & SHF_COMPRESSED))
			continue;
		const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name != NULL && strncmp(name, ".debug_", 7) == 0)
			return true;
	}
	return false;
}

/* The cache's directory for unpacked debug files, made if need be; false when there is none. */
static bool unpacked_dir(char *out, size_t size)
{
	const char *env = getenv("CTP_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char base[PATH_MAX];
	int n;
	if (env != NULL && env[0] == '\0')
		return false; /* set and empty: no cache */
	if (env != NULL)
		n = snprintf(base, sizeof(base), "%s", env);
	else if (xdg != NULL && xdg[0] == '/')
		n = snprintf(base, sizeof(base), "%s/ctp", xdg);
	else if (home != NULL && home[0] == '/')
		n = snprintf(base, sizeof(base), "%s/.cache/ctp", home);
	else
		return false;
	if (n <= 0 || (size_t)n >= sizeof(base))
		return false;
	n = snprintf(out, size, "%s/unpacked", base);
	if (n <= 0 || (size_t)n >= size)
		return false;
	/* Each level, as mkdir -p; private to the user. */
	for (char *p = out + 1;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;
		*p = 0;
		bool ok = mkdir(out, 0700) == 0 || errno == EEXIST;
		*p = c;
		if (!ok)
			return false;
		if (c == 0)
			return true;
	}
}

static bool unpacked_path(char *out, size_t size, const uint8_t *id, size_t id_len)
{
	char dir[PATH_MAX];
	if (id_len < 2 || id_len > 64 || !unpacked_dir(dir, sizeof(dir)))
		return false;
	int n = snprintf(out, size, "%s/", dir);
	for (size_t i = 0; i < id_len && n > 0 && (size_t)n < size; i++)
		n += snprintf(out + n, size - (size_t)n, "%02x", id[i]);
	if (n <= 0 || (size_t)n >= size)
		return false;
	n += snprintf(out + n, size - (size_t)n, ".debug");
	return n > 0 && (size_t)n < size;
}

/* Whether the file open as f holds every section its headers describe and none is compressed:
 * a copy cut short (a full disk, a crash while another process wrote it) or not ours is not
 * used. */
static bool whole_and_unpacked(const struct ctp_elf_file *f)
{
	struct stat st;
	GElf_Ehdr eh;
	if (fstat(f->fd, &st) != 0 || gelf_getehdr(f->elf, &eh) == NULL)
		return false;
	uint64_t size = (uint64_t)st.st_size;
	if (eh.e_shoff > size || (uint64_t)eh.e_shnum * eh.e_shentsize > size - eh.e_shoff)
		return false;
	for (Elf_Scn *scn = elf_nextscn(f->elf, NULL); scn; scn = elf_nextscn(f->elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL || (sh.sh_flags & SHF_COMPRESSED))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return false;
	}
	return true;
}

/* Inflates every compressed section of the ELF file open read-write on fd, in place. */
static bool unpack_in_place(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (elf == NULL)
		return false;
	bool ok = elf_kind(elf) == ELF_K_ELF;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); ok && scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) == NULL)
			ok = false;
		else if (shdr.sh_flags & SHF_COMPRESSED)
			ok = elf_compress(scn, 0, 0) >= 0;
	}
	ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
	elf_end(elf);
	return ok;
}

/* Writes the unpacked copy of `src` to `path`: into a temporary file beside it, renamed when
 * whole, so that a collector reading the cache at the same time sees no half-written file. */
static bool unpack_to(const struct ctp_elf_file *src, const char *path)
{
	struct stat st;
	if (fstat(src->fd, &st) != 0)
		return false;
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return false;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = true;
	off_t off = 0;
	while (ok && off < st.st_size) {
		ssize_t n = sendfile(fd, src->fd, &off, (size_t)(st.st_size - off));
		ok = n > 0;
	}
	ok = ok && unpack_in_place(fd);
	ok = close(fd) == 0 && ok;
	ok = ok && chmod(tmp, 0600) == 0 && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	return ok;
}

bool ctp_elf_unpacked_open(struct ctp_elf_file *out, const struct ctp_elf_file *src,
			   const uint8_t *id, size_t id_len)
{
	out->fd = -1;
	out->elf = NULL;
	char path[PATH_MAX];
	if (!unpacked_path(path, sizeof(path), id, id_len))
		return false;
	/* A copy that is not whole, of another build, or still compressed is made again. */
	for (int attempt = 0; attempt < 2; attempt++) {
		if (attempt == 1 && !unpack_to(src, path))
			return false;
		if (ctp_elf_file_open_checked(out, path, id, id_len)) {
			if (whole_and_unpacked(out))
				return true;
			ctp_elf_file_close(out);
		}
	}
	return false;
}

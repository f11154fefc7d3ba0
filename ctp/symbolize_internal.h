/* Pieces of the symbolizer (ctp/symbolize.h): the function symbol table of one ELF file
 * (symbolize_elf.c), line lookup in DWARF (symbolize_dwarf.c) and debug files from debuginfod
 * (symbolize_debuginfod.c). Used only by symbolize*.c. */
#ifndef CTP_SYMBOLIZE_INTERNAL_H
#define CTP_SYMBOLIZE_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An ELF file opened read-only; elf is NULL when it could not be opened or is not ELF. */
struct ctp_elf_file {
	int fd;
	Elf *elf;
};

bool ctp_elf_file_open(struct ctp_elf_file *f, const char *path);
void ctp_elf_file_close(struct ctp_elf_file *f);

/* Opens path and checks that its build-id note is `id`: a file of another build would give
 * plausible but wrong answers. */
bool ctp_elf_file_open_checked(struct ctp_elf_file *f, const char *path, const uint8_t *id,
			       size_t id_len);

/* The GNU build-id note of an open file; 0 when it has none. */
size_t ctp_elf_build_id(Elf *elf, const uint8_t **id);

/* Where separate debug files are, unless ctp_symbolizer_set_debug_dir says otherwise. */
#define CTP_DEBUG_DIR "/usr/lib/debug"

/* Opens DIR/.build-id/xx/rest.debug for `id` (the layout Debian's -dbgsym packages install
 * under /usr/lib/debug) and checks that its own build-id note is `id`. */
bool ctp_elf_debug_file_open(struct ctp_elf_file *f, const char *dir, const uint8_t *id,
			     size_t id_len);

/* Whether any .debug_* section of elf is compressed (SHF_COMPRESSED). */
bool ctp_elf_dwarf_compressed(Elf *elf);

/* Opens the copy of `src` (build-id `id`) with its sections decompressed, from the user's cache,
 * making it there first if need be (symbolize_unpacked.c); false when there is no cache or it
 * cannot be written. */
bool ctp_elf_unpacked_open(struct ctp_elf_file *out, const struct ctp_elf_file *src,
			   const uint8_t *id, size_t id_len);

/* Whether DEBUGINFOD_URLS names a server to ask. */
bool ctp_debuginfod_wanted(void);

/* Fetches the debug file of build-id `id` from the servers DEBUGINFOD_URLS names (or takes it
 * from the client's cache) and opens it into f, checking its build-id; false when no server is
 * named or none has it (said on stderr, naming module_path). */
bool ctp_debuginfod_open(struct ctp_elf_file *f, const uint8_t *id, size_t id_len,
			 const char *module_path);

/* Function symbols of one ELF, sorted by address. */
struct ctp_symtab;

/* Reads the symbol table of type `sh_type` (SHT_SYMTAB or SHT_DYNSYM); NULL when the file has
 * none or it holds no function. Names point into `elf`, which must outlive the table. */
struct ctp_symtab *ctp_symtab_load(Elf *elf, uint32_t sh_type);
void ctp_symtab_free(struct ctp_symtab *t);

/* The function containing file address `vaddr` (demangled), with vaddr's offset into it; NULL
 * when no function contains it. */
const char *ctp_symtab_lookup(struct ctp_symtab *t, uint64_t vaddr, uint64_t *off);

/* File and line of file address `vaddr` from `dbg`; false when DWARF does not cover it. The
 * file name belongs to `dbg`. */
bool ctp_dwarf_line(Dwarf *dbg, uint64_t vaddr, const char **file, int *line);

/* Gives d the guard's out-of-memory handler in place of libdw's, which ends the process
 * (symbolize_guard.c); returns d. */
Dwarf *ctp_dwarf_guard(Dwarf *d);

/* ctp_dwarf_line of a guarded Dwarf, with libdw's failures as answers: where it ran out of
 * memory or crashed (CTP_DWARF_FAULT: a fault, or an assertion it failed), dbg is lost, never to
 * be read or ended again. */
enum ctp_dwarf_answer {
	CTP_DWARF_FOUND,
	CTP_DWARF_NOT_COVERED,
	CTP_DWARF_OUT_OF_MEMORY,
	CTP_DWARF_FAULT,
};
enum ctp_dwarf_answer ctp_dwarf_line_guarded(Dwarf *dbg, uint64_t vaddr, const char **file,
					     int *line);

#endif

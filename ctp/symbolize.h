/* Turning addresses into function+offset (libelf symbol tables) and file:line (libdw), outside
 * the traced process (the collector, ctp-pstack), from the module table the process keeps in
 * its segment. Never used in the traced process. */
#ifndef CTP_SYMBOLIZE_H
#define CTP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctp_symbolizer;

struct ctp_symbolizer *ctp_symbolizer_new(void);
void ctp_symbolizer_free(struct ctp_symbolizer *s);

/* Where separate debug files are found by build-id: DIR/.build-id/xx/rest.debug. The default is
 * /usr/lib/debug, where Debian's -dbgsym packages put them (gdb's debug-file-directory). Call it
 * before the first ctp_symbolize. Returns false when out of memory. */
bool ctp_symbolizer_set_debug_dir(struct ctp_symbolizer *s, const char *dir);

/* What is known of one address. Strings belong to the symbolizer and live until it is freed;
 * any of them may be NULL (unknown), line is 0 when unknown. */
struct ctp_frame_info {
	const char *sym; /* function name, demangled where it is C++ */
	uint64_t off;	 /* pc - start of sym */
	const char *file;
	int line;
};

/* Symbolizes `pc` inside the object `module_path` loaded with bias `load_bias` (dlpi_addr).
 * `build_id` (may be empty) selects separate debug info (see ctp_symbolizer_set_debug_dir) and
 * guards against a file replaced on disk since the run. `return_address` says pc is a return
 * address (every frame of an unwound stack): the call site, pc - 1, is then used for file:line
 * while sym+off stay those of pc, as gdb and perf show them. Returns false when nothing at all
 * is known of the address (the module cannot be read). Results are cached per module. */
bool ctp_symbolize(struct ctp_symbolizer *s, const char *module_path, const uint8_t *build_id,
		   size_t build_id_len, uint64_t load_bias, uint64_t pc, bool return_address,
		   struct ctp_frame_info *out);

/* A frame without a function name, as ctp-cat and ctp-pstack show it: its module's file name and
 * its address in that file (libfoo.so+0x1a2b: pc less the load bias, what `addr2line -e` takes
 * once the process is gone), or its address alone when its module is not known. Into buf;
 * returns buf. */
const char *ctp_frame_place(char *buf, size_t size, const char *module_path, bool in_module,
			    uint64_t module_off, uint64_t pc);

#endif

/* The symbolizer on real objects: this test binary (built with -g, once as PIE and once as a
 * fixed-address executable), libc (found through dl_iterate_phdr as the preload finds modules)
 * and libstdc++ (C++ names), plus the failures: no such file, a build-id that does not match. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctp/symbolize.h"

/* Where an address lives, as the preload's module table records it. */
struct module_ref {
	uintptr_t addr;
	char path[4096];
	uint64_t bias;
	uint8_t build_id[64];
	size_t build_id_len;
	bool found;
};

static size_t note_build_id(const char *notes, size_t size, uint8_t *out, size_t cap)
{
	size_t at = 0;
	while (at + sizeof(ElfW(Nhdr)) <= size) {
		const ElfW(Nhdr) *n = (const void *)(notes + at);
		size_t name_at = at + sizeof(*n);
		size_t desc_at = name_at + ((n->n_namesz + 3) & ~3u);
		size_t next = desc_at + ((n->n_descsz + 3) & ~3u);
		if (next > size)
			break;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    memcmp(notes + name_at, "GNU", 4) == 0 && n->n_descsz <= cap) {
			memcpy(out, notes + desc_at, n->n_descsz);
			return n->n_descsz;
		}
		at = next;
	}
	return 0;
}

static int find_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct module_ref *m = data;
	bool inside = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && m->addr >= lo && m->addr < lo + ph->p_memsz)
			inside = true;
	}
	if (!inside)
		return 0;
	m->bias = info->dlpi_addr;
	if (info->dlpi_name[0] != '\0') {
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	} else {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
		m->path[n > 0 ? n : 0] = '\0';
	}
	for (int i = 0; i < info->dlpi_phnum && m->build_id_len == 0; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE)
			m->build_id_len =
				note_build_id((const char *)(info->dlpi_addr + ph->p_vaddr),
					      ph->p_memsz, m->build_id, sizeof(m->build_id));
	}
	m->found = true;
	return 1;
}

static struct module_ref find_module(const void *addr)
{
	struct module_ref m = {.addr = (uintptr_t)addr};
	dl_iterate_phdr(find_module_cb, &m);
	assert_true(m.found);
	return m;
}

static bool symbolize(struct ctp_symbolizer *s, const struct module_ref *m, const void *pc,
		      bool return_address, struct ctp_frame_info *out)
{
	return ctp_symbolize(s, m->path, m->build_id, m->build_id_len, m->bias, (uintptr_t)pc,
			     return_address, out);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A function of this binary and a call inside it whose return address and line are kept. */
static void *captured_return_address;
static int captured_call_line;
static int data_in_no_function = 42;

__attribute__((noinline)) static void capture_return_address(void)
{
	captured_return_address = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* The line number and the call must stay on one line. */
// clang-format off
__attribute__((noinline)) static int target_function(int x)
{
	captured_call_line = __LINE__; capture_return_address();
	return x + 1;
}
// clang-format on

static int setup(void **state)
{
	*state = ctp_symbolizer_new();
	return *state == NULL;
}

static int teardown(void **state)
{
	ctp_symbolizer_free(*state);
	return 0;
}

static void test_own_function_start(void **state)
{
	struct module_ref m = find_module((const void *)target_function);
	assert_true(m.build_id_len > 0);
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, (const void *)target_function, false, &fi));
	assert_non_null(fi.sym);
	assert_string_equal(fi.sym, "target_function");
	assert_int_equal(fi.off, 0);
	assert_non_null(fi.file);
	assert_true(ends_with(fi.file, "test_symbolize.c"));
}

static void test_own_return_address(void **state)
{
	target_function(1);
	const void *ra = captured_return_address;
	struct module_ref m = find_module(ra);
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, ra, true, &fi));
	assert_non_null(fi.sym);
	assert_string_equal(fi.sym, "target_function");
	assert_true(fi.off > 0);
	assert_int_equal(fi.off, (uintptr_t)ra - (uintptr_t)target_function);
	assert_non_null(fi.file);
	assert_true(ends_with(fi.file, "test_symbolize.c"));
	assert_int_equal(fi.line, captured_call_line);

	/* Asked again: the cached answer is the same. */
	struct ctp_frame_info again;
	assert_true(symbolize(*state, &m, ra, true, &again));
	assert_ptr_equal(again.sym, fi.sym);
	assert_int_equal(again.off, fi.off);
	assert_int_equal(again.line, fi.line);
}

static void test_libc_function(void **state)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	assert_non_null(fn);
	struct module_ref m = find_module(fn);
	assert_non_null(strstr(m.path, "libc.so"));
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, fn, false, &fi));
	assert_non_null(fi.sym);
	assert_true(strcmp(fi.sym, "getpid") == 0 || strcmp(fi.sym, "__getpid") == 0);
	assert_int_equal(fi.off, 0);
}

/* libc carries no DWARF of its own; with its -dbgsym (libc6-dbg) installed, file:line come from
 * /usr/lib/debug/.build-id. Skipped where that package is missing. */
static void test_libc_separate_debug_info(void **state)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	assert_non_null(fn);
	struct module_ref m = find_module(fn); /* not an ASan interceptor: libc's own */
	assert_non_null(strstr(m.path, "libc.so"));
	char debug_path[256];
	int n = snprintf(debug_path, sizeof(debug_path), "/usr/lib/debug/.build-id/%02x/",
			 m.build_id[0]);
	for (size_t i = 1; i < m.build_id_len; i++)
		n += snprintf(debug_path + n, sizeof(debug_path) - (size_t)n, "%02x",
			      m.build_id[i]);
	snprintf(debug_path + n, sizeof(debug_path) - (size_t)n, ".debug");
	if (access(debug_path, R_OK) != 0)
		skip();
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, fn, false, &fi));
	assert_non_null(fi.sym);
	assert_true(strcmp(fi.sym, "getpid") == 0 || strcmp(fi.sym, "__getpid") == 0);
	assert_non_null(fi.file);
	assert_true(fi.line > 0);
}

static void test_cxx_name_demangled(void **state)
{
	void *fn = dlsym(RTLD_DEFAULT, "_ZSt9terminatev");
	assert_non_null(fn);
	struct module_ref m = find_module(fn);
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, fn, false, &fi));
	assert_non_null(fi.sym);
	assert_string_equal(fi.sym, "std::terminate()");
	assert_int_equal(fi.off, 0);
}

static void test_address_in_no_function(void **state)
{
	struct module_ref m = find_module(&data_in_no_function);
	struct ctp_frame_info fi;
	assert_true(symbolize(*state, &m, &data_in_no_function, false, &fi));
	assert_null(fi.sym);
	assert_null(fi.file);
	assert_int_equal(fi.line, 0);
}

static void test_missing_module(void **state)
{
	struct ctp_frame_info fi;
	for (int i = 0; i < 2; i++) { /* the second time from the cache */
		assert_false(ctp_symbolize(*state, "/nonexistent/libnothing.so", NULL, 0, 0x1000,
					   0x1234 + (uint64_t)i, false, &fi));
		assert_null(fi.sym);
		assert_null(fi.file);
	}
	assert_false(ctp_symbolize(*state, "", NULL, 0, 0, 0x1234, false, &fi));
}

static void test_wrong_build_id(void **state)
{
	struct module_ref m = find_module((const void *)target_function);
	memset(m.build_id, 0xab, 20);
	m.build_id_len = 20;
	struct ctp_frame_info fi;
	assert_false(symbolize(*state, &m, (const void *)target_function, false, &fi));
	assert_null(fi.sym);
	assert_null(fi.file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_function_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_return_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libc_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libc_separate_debug_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_name_demangled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_address_in_no_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_build_id, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

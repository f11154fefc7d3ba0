/* The symbolizer on real objects: this test binary (built with -g, once as PIE and once as a
 * fixed-address executable), libc (found through dl_iterate_phdr as the preload finds modules),
 * libstdc++ (C++ names) and a stripped library with a separate debug file, plus the failures: no
 * such file, a build-id that does not match, a debug file of another build. */
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

/* A library built here, whose debug information split_debug.sh moved into a separate file in a
 * build-id directory of the build tree, the layout of /usr/lib/debug/.build-id. */
struct dbg_lib {
	void *handle;
	int (*function)(int);
	void **return_address;
	int *call_line;
};

static struct dbg_lib dbg_lib_open(const char *path)
{
	struct dbg_lib l = {.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)};
	assert_non_null(l.handle);
	*(void **)&l.function = dlsym(l.handle, "ctp_dbg_function");
	l.return_address = dlsym(l.handle, "ctp_dbg_return_address");
	l.call_line = dlsym(l.handle, "ctp_dbg_call_line");
	assert_non_null(l.function);
	assert_non_null(l.return_address);
	assert_non_null(l.call_line);
	return l;
}

static struct ctp_symbolizer *symbolizer_with_debug_dir(const char *dir)
{
	struct ctp_symbolizer *s = ctp_symbolizer_new();
	assert_non_null(s);
	assert_true(ctp_symbolizer_set_debug_dir(s, dir));
	return s;
}

/* file:line of a stripped library come from its separate debug file, found by build-id; without
 * that file there are none (the library itself has no line information left). */
static void test_separate_debug_file(void **state)
{
	(void)state;
	struct dbg_lib l = dbg_lib_open(CTP_DBG_LIB_SPLIT);
	assert_int_equal(l.function(5), 10);
	const void *ra = *l.return_address;
	struct module_ref m = find_module(ra);
	assert_string_equal(m.path, CTP_DBG_LIB_SPLIT);
	assert_true(m.build_id_len > 0);

	struct ctp_symbolizer *without = symbolizer_with_debug_dir(CTP_DBG_DIR "/nothing-here");
	struct ctp_frame_info fi;
	assert_true(symbolize(without, &m, ra, true, &fi));
	assert_non_null(fi.sym); /* from the library's own symbol table */
	assert_string_equal(fi.sym, "ctp_dbg_function");
	assert_null(fi.file);
	assert_int_equal(fi.line, 0);
	ctp_symbolizer_free(without);

	struct ctp_symbolizer *with = symbolizer_with_debug_dir(CTP_DBG_DIR);
	assert_true(symbolize(with, &m, ra, true, &fi));
	assert_non_null(fi.sym);
	assert_string_equal(fi.sym, "ctp_dbg_function");
	assert_int_equal(fi.off, (uintptr_t)ra - (uintptr_t)l.function);
	assert_non_null(fi.file);
	assert_true(ends_with(fi.file, "split_debug_lib.c"));
	assert_int_equal(fi.line, *l.call_line);
	ctp_symbolizer_free(with);
	dlclose(l.handle);
}

/* A debug file at the library's build-id path that belongs to another build (its own build-id
 * differs) would give plausible but wrong lines: it is refused. */
static void test_debug_file_of_another_build(void **state)
{
	(void)state;
	struct dbg_lib l = dbg_lib_open(CTP_DBG_LIB_OTHER);
	assert_int_equal(l.function(5), 15);
	const void *ra = *l.return_address;
	struct module_ref m = find_module(ra);
	assert_true(m.build_id_len > 0);
	struct ctp_symbolizer *s = symbolizer_with_debug_dir(CTP_DBG_DIR);
	struct ctp_frame_info fi;
	assert_true(symbolize(s, &m, ra, true, &fi));
	assert_non_null(fi.sym);
	assert_string_equal(fi.sym, "ctp_dbg_function");
	assert_null(fi.file);
	assert_int_equal(fi.line, 0);
	ctp_symbolizer_free(s);
	dlclose(l.handle);
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
		cmocka_unit_test(test_separate_debug_file),
		cmocka_unit_test(test_debug_file_of_another_build),
		cmocka_unit_test_setup_teardown(test_cxx_name_demangled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_address_in_no_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_build_id, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

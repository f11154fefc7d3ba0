/* libdw's own answer to an allocation that fails is to end the process (its default
 * out-of-memory handler calls error(EXIT_FAILURE)); the collector, which symbolizes as it
 * goes, ended with it under an address-space limit, and so did the rest of the trace. The
 * symbolizer must live on: for each N, a child process has the Nth allocation libdw makes fail
 * (and every one after it) while it opens a module and looks up a function in it, and it must
 * end normally with the function's name, from the symbol table. The modules are this program
 * and libc, whose large debug file (libc6-dbg's) makes libdw also fail its own assertions and
 * dereference what it did not check; N runs over the allocations such a lookup makes.
 *
 * And outside a lookup the guard's signal handler leaves everything as it was: abort(), faults
 * and signals sent end the process as they would have, and a handler set before runs.
 *
 * The allocator is glibc's, reached through its __libc_* names by this program's malloc,
 * calloc and realloc, which libdw calls; a call is libdw's when it returns into libdw's code.
 * Not a unit test for the sanitizer builds: their runtimes interpose the same functions. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctp/symbolize.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

static uintptr_t libdw_lo, libdw_hi; /* libdw's code */
static long fail_from = -1;	     /* the first of libdw's allocations to fail; -1: none */
static long libdw_calls;	     /* libdw's allocations so far */

static bool fails(void *caller)
{
	uintptr_t at = (uintptr_t)caller;
	if (at < libdw_lo || at >= libdw_hi)
		return false;
	return fail_from >= 0 && libdw_calls++ >= fail_from;
}

void *malloc(size_t size)
{
	return fails(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fails(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fails(__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}

/* A loaded object: its path, load bias and code, found by a part of its file name. */
struct object {
	const char *name_part;
	char path[4096];
	uint64_t bias;
	uintptr_t lo, hi;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object *o = arg;
	if (!strstr(info->dlpi_name, o->name_part))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
			o->bias = info->dlpi_addr;
			o->lo = info->dlpi_addr + ph->p_vaddr;
			o->hi = o->lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

__attribute__((noinline)) int looked_up_function(int x)
{
	return x * 3 + 1;
}

/* What a child looks up: pc in the module at path, loaded with bias, whose name must hold
 * name_part. */
struct lookup {
	const char *path;
	uint64_t bias, pc;
	const char *name_part;
};

/* The lookup in a child, with libdw's allocations failing from the n-th on (LONG_MAX: none).
 * Its status: 0 when it named the function, 3 when it did not (libdw's handler exits 1). When
 * report_fd is not -1, the child writes there how many allocations libdw made. */
static int lookup_failing_from(long n, const struct lookup *l, int report_fd)
{
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		if (report_fd <
		    0) /* libdw's assertions and the symbolizer's word on them, each time */
			freopen("/dev/null", "w", stderr);
		fail_from = n;
		struct ctp_symbolizer *s = ctp_symbolizer_new();
		struct ctp_frame_info fi;
		bool named = s && ctp_symbolize(s, l->path, NULL, 0, l->bias, l->pc, false, &fi) &&
			     fi.sym && strstr(fi.sym, l->name_part);
		ctp_symbolizer_free(s);
		if (report_fd >= 0 && write(report_fd, &libdw_calls, sizeof(libdw_calls)) < 0)
			_exit(4);
		_exit(named ? 0 : 3);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The sweep over every allocation libdw makes for one lookup; the number of lookups that did
 * not end well. */
static int sweep(const char *what, const struct lookup *l)
{
	/* How many allocations libdw makes for the lookup, counted in a run where none fails. */
	int fds[2];
	if (pipe(fds) != 0)
		return 1;
	int rc = lookup_failing_from(LONG_MAX, l, fds[1]);
	long total = 0;
	if (read(fds[0], &total, sizeof(total)) != (ssize_t)sizeof(total))
		total = 0;
	close(fds[0]);
	close(fds[1]);
	if (rc != 0 || total <= 0) {
		fprintf(stderr,
			"FAIL: %s: the lookup with nothing failing: status %d, %ld allocations\n",
			what, rc, total);
		return 1;
	}
	/* Every allocation of a small lookup; of a large one (thousands), the first hundred and
	 * then every step-th, about 400 in all: the failures of libdw are each of a few kinds,
	 * and each kind at many allocations. */
	long step = total > 400 ? (total - 100) / 300 : 1, tried = 0;
	int failures = 0;
	for (long n = 0; n < total; n += n < 100 ? 1 : step, tried++) {
		rc = lookup_failing_from(n, l, -1);
		if (rc != 0) {
			fprintf(stderr,
				"FAIL: %s: libdw's allocations failing from the %ld-th of %ld on, "
				"the "
				"lookup ended with status %d (1: libdw ended the process)\n",
				what, n + 1, total, rc);
			failures++;
		}
	}
	printf("%s: libdw makes %ld allocations; %ld lookups, each with them failing from another "
	       "on: %d failed\n",
	       what, total, tried, failures);
	return failures;
}

/* What a child does after a lookup, which set the guard's signal handler. */
enum after { ABORTS, SENT_SIGABRT, FAULTS, FAULTS_UNDER_ITS_HANDLER, SENT_SIGSEGV };

static void own_handler(int sig)
{
	(void)sig;
	_exit(7);
}

/* Outside a lookup the guard changes nothing: abort() and faults end the process as they would
 * have, signals sent are delivered, a handler set before is called. The status of each. */
static int status_after_lookup(enum after what, const struct lookup *l)
{
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		if (what == FAULTS_UNDER_ITS_HANDLER)
			signal(SIGSEGV, own_handler);
		struct ctp_symbolizer *s = ctp_symbolizer_new();
		struct ctp_frame_info fi;
		if (!s || !ctp_symbolize(s, l->path, NULL, 0, l->bias, l->pc, false, &fi))
			_exit(3);
		if (what == ABORTS)
			abort();
		if (what == SENT_SIGABRT)
			kill(getpid(), SIGABRT);
		if (what == SENT_SIGSEGV)
			kill(getpid(), SIGSEGV);
		if (what == FAULTS || what == FAULTS_UNDER_ITS_HANDLER)
			*(volatile int *)(uintptr_t)8 = 1;
		_exit(0);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int expect_after_lookup(const char *what, enum after after, int want, const struct lookup *l)
{
	int got = status_after_lookup(after, l);
	if (got == want)
		return 0;
	fprintf(stderr, "FAIL: after a lookup, a child that %s ended with status %d, not %d\n",
		what, got, want);
	return 1;
}

int main(void)
{
	struct object libdw = {.name_part = "/libdw."}, libc = {.name_part = "/libc.so"};
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || !dl_iterate_phdr(find_object, &libdw) ||
	    !dl_iterate_phdr(find_object, &libc)) {
		fprintf(stderr, "FAIL: cannot find this program, libdw or libc in it\n");
		return 1;
	}
	self[len] = 0;
	libdw_lo = libdw.lo;
	libdw_hi = libdw.hi;
	/* libc's decompressed debug file (symbolize_unpacked.c) is cached in a directory of the
	 * test's own. */
	char cache[] = "/tmp/ctp-symbolize-guard.XXXXXX";
	if (!mkdtemp(cache) || setenv("CTP_CACHE_DIR", cache, 1) != 0)
		return 1;

	/* The program is the first object dl_iterate_phdr lists: its bias is the first's. */
	struct object me = {.name_part = ""};
	dl_iterate_phdr(find_object, &me);
	struct lookup own = {.path = self,
			     .bias = me.bias,
			     .pc = (uint64_t)(uintptr_t)looked_up_function + 4,
			     .name_part = "looked_up_function"};
	struct lookup in_libc = {.path = libc.path,
				 .bias = libc.bias,
				 .pc = (uint64_t)(uintptr_t)fputs + 4,
				 .name_part = "fputs"};
	int failures =
		sweep("this program", &own) + sweep("libc, with libc6-dbg's debug file", &in_libc);
	failures += expect_after_lookup("calls abort()", ABORTS, 128 + SIGABRT, &own);
	failures += expect_after_lookup("is sent SIGABRT", SENT_SIGABRT, 128 + SIGABRT, &own);
	failures += expect_after_lookup("faults", FAULTS, 128 + SIGSEGV, &own);
	failures += expect_after_lookup("faults, its own SIGSEGV handler set before",
					FAULTS_UNDER_ITS_HANDLER, 7, &own);
	failures += expect_after_lookup("is sent SIGSEGV", SENT_SIGSEGV, 128 + SIGSEGV, &own);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", cache);
	if (system(rm) != 0)
		fprintf(stderr, "could not remove %s\n", cache);
	return failures ? 1 : 0;
}

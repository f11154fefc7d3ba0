/* ctp-pstack PID: every coroutine of a traced, running process, now (docs/ctp-pstack.md). It
 * reads the process's segment through a read-only mapping of the memfd the process holds: the
 * process is neither stopped nor written to, and it cannot tell that it was looked at.
 * ctp-pstack --core CORE [EXE]: the same view of a process that left a core file, from the
 * segment's bytes in the core (pstack/core_source.c). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctp/core_file.h"
#include "ctp/deep_stack.h"
#include "ctp/symcache.h"
#include "ctp/version.h"
#include "pstack/groups.h"
#include "ctp/zwriter.h"
#include "pstack/core_source.h"
#include "pstack/locate.h"
#include "pstack/procinfo.h"
#include "pstack/report.h"
#include "pstack/snapshot.h"
#include "pstack/view.h"

static const char usage_lines[] = "usage: ctp-pstack [--json] [--no-symbols] [--full-names] PID\n"
				  "       ctp-pstack --report [--json | --full-names] PID\n"
				  "       ctp-pstack --trace FILE PID\n"
				  "       ctp-pstack [OPTIONS] --core CORE [EXE]\n";

/* A usage error: what was wrong has been said; the forms, and where the rest is. */
static enum pstack_exit usage_error(void)
{
	fputs(usage_lines, stderr);
	fputs("Try 'ctp-pstack --help'.\n", stderr);
	return PSTACK_EXIT_USAGE;
}

static void usage(FILE *f)
{
	fputs(usage_lines, f);
	fputs("\n"
	      "Shows every coroutine of a running process traced by ctp (under ctp-run, or with\n"
	      "LD_PRELOAD=libctp_preload.so): its id, kind, entry function, state and since when,\n"
	      "thread, the fd it waits on, and its symbolized suspend stack, grouped by stack.\n"
	      "The process is not stopped. With --core, the same of the process a core file was\n"
	      "made of (by a crash, or by gcore), read from the core.\n"
	      "\n"
	      "      --core CORE      read core file CORE instead of a running process; EXE is\n"
	      "                       the program's file when it is no longer where CORE says\n"
	      "      --full-names     C++ names with their template arguments (the text view\n"
	      "                       and --report shorten each outermost <...> list; JSON\n"
	      "                       and --trace always keep them)\n"
	      "      --json           one JSON document instead of text (docs/ctp-pstack.md)\n"
	      "      --no-symbols     addresses only (libfoo.so+0x1a2b): do not read the\n"
	      "                       process's binaries\n"
	      "      --report         ctp-cat's report on the snapshot (its exit status: 3 when\n"
	      "                       it has findings); with --json, the report's JSON\n"
	      "      --trace FILE     write the snapshot as a trace (- for standard output)\n"
	      "  -h, --help           show this help\n"
	      "      --version        show the version\n"
	      "\n"
	      "Exit status: 0 shown, 1 no such process (or core file), 2 usage, 4 the process is\n"
	      "not traced, 5 permission denied, 6 its segment cannot be read, 7 the output cannot\n"
	      "be written, 8 not a core file, 9 the core lacks the segment (coredump_filter),\n"
	      "10 the core is truncated; with --report, the report's own status (0, or 3 with\n"
	      "findings).\n",
	      f);
}

static bool parse_pid(const char *s, pid_t *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v <= 0 || v > 0x7fffffff)
		return false;
	*out = (pid_t)v;
	return true;
}

enum {
	OPT_JSON = 256,
	OPT_NO_SYMBOLS,
	OPT_VERSION,
	OPT_REPORT,
	OPT_TRACE,
	OPT_CORE,
	OPT_FULL_NAMES
};

/* --trace FILE: the snapshot as a trace file, made as ctp-run makes its output ("-": stdout). */
static int write_trace_file(struct pstack_view *v, const struct pstack_procinfo *pi,
			    const char *path)
{
	struct ctp_zwriter *z = strcmp(path, "-") == 0 ? ctp_zwriter_open_fd(dup(STDOUT_FILENO),
									     "(standard output)", 1)
						       : ctp_zwriter_open(path, 1);
	if (!z) {
		fprintf(stderr, "ctp-pstack: cannot write %s: %s\n", path, strerror(errno));
		return PSTACK_EXIT_OUTPUT;
	}
	pstack_write_trace(v, pi, z);
	return ctp_zwriter_close(z, NULL) ? PSTACK_EXIT_OK : PSTACK_EXIT_OUTPUT;
}

static int pstack_main(int argc, char **argv)
{
	static const struct option options[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
		{"full-names", no_argument, NULL, OPT_FULL_NAMES},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{"report", no_argument, NULL, OPT_REPORT},
		{"trace", required_argument, NULL, OPT_TRACE},
		{"core", required_argument, NULL, OPT_CORE},
		{0},
	};
	bool json = false, symbols = true, report = false, full_names = false;
	const char *trace = NULL, *core = NULL;
	int opt;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_SYMBOLS:
			symbols = false;
			break;
		case OPT_FULL_NAMES:
			full_names = true;
			break;
		case OPT_REPORT:
			report = true;
			break;
		case OPT_TRACE:
			trace = optarg;
			break;
		case OPT_CORE:
			core = optarg;
			break;
		case 'h':
			usage(stdout);
			return PSTACK_EXIT_OK;
		case OPT_VERSION:
			printf("%s\n", ctp_version_string());
			return PSTACK_EXIT_OK;
		default:
			return usage_error();
		}
	}
	if (report && trace) {
		fputs("ctp-pstack: --report and --trace do not go together\n", stderr);
		return PSTACK_EXIT_USAGE;
	}
	if (full_names && (json || trace)) {
		fputs("ctp-pstack: --full-names is for the text views: JSON and traces always have "
		      "the full names\n",
		      stderr);
		return PSTACK_EXIT_USAGE;
	}
	struct pstack_source src;
	char why[640];
	enum pstack_exit status;
	pid_t pid = 0;
	if (core) {
		if (optind + 1 < argc) {
			fputs("ctp-pstack: --core takes one core file and at most one program\n",
			      stderr);
			return usage_error();
		}
		status = pstack_open_core(core, optind < argc ? argv[optind] : NULL, &src, why,
					  sizeof(why));
	} else {
		if (optind + 1 != argc || !parse_pid(argv[optind], &pid)) {
			if (optind == argc)
				fputs("ctp-pstack: no PID given\n", stderr);
			else if (optind + 1 == argc)
				fprintf(stderr, "ctp-pstack: not a process id: %s\n", argv[optind]);
			else
				fprintf(stderr, "ctp-pstack: one PID, not %d\n", argc - optind);
			return usage_error();
		}
		status = pstack_locate(pid, &src, why, sizeof(why));
	}
	if (status != PSTACK_EXIT_OK) {
		fprintf(stderr, "ctp-pstack: %s\n", why);
		return status;
	}
	struct pstack_snapshot snap;
	pstack_snapshot_take(&src, &snap);
	struct pstack_groups groups;
	pstack_groups_make(&snap, &groups);

	struct pstack_procinfo pi;
	struct pstack_core_facts facts = {0};
	if (src.core) {
		pstack_procinfo_from_core(src.core, src.executable, &pi);
		facts = (struct pstack_core_facts){
			.path = core,
			.executable = src.executable,
			.signal = src.core->signal,
			.signal_tid = src.core->signal ? src.core->threads[0].tid : 0,
		};
	} else {
		pstack_procinfo_read(pid, &pi);
	}
	struct ctp_symcache syms = {0};
	ctp_symcache_read_modules(&syms, &src.view);
	struct pstack_view v = {
		.snap = &snap,
		.groups = &groups,
		.syms = &syms,
		.symbolizer = symbols ? ctp_symbolizer_new() : NULL,
		.modules = {ctp_symcache_read_modules_of, &src.view},
		.command = pi.command,
		.core = src.core ? &facts : NULL,
		.full_names = full_names,
		.out = stdout,
	};
	int out_status;
	if (report) {
		int st = pstack_report(&v, &pi, json);
		out_status = st < 0 ? PSTACK_EXIT_OUTPUT : st;
	} else if (trace) {
		out_status = write_trace_file(&v, &pi, trace);
	} else {
		if (json)
			pstack_write_json(&v);
		else
			pstack_write_text(&v);
		out_status = fflush(stdout) == 0 && !ferror(stdout) ? PSTACK_EXIT_OK
								    : PSTACK_EXIT_OUTPUT;
		if (out_status != PSTACK_EXIT_OK)
			fprintf(stderr, "ctp-pstack: cannot write the output: %s\n",
				strerror(errno));
	}

	ctp_symbolizer_free(v.symbolizer);
	ctp_symcache_free(&syms);
	pstack_groups_free(&groups);
	pstack_snapshot_free(&snap);
	pstack_source_close(&src);
	return out_status;
}

/* Symbolizing runs libdw, which needs a deeper stack than a small `ulimit -s` leaves. */
int main(int argc, char **argv)
{
	return ctp_main_on_deep_stack(pstack_main, argc, argv);
}

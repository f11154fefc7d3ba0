/* ctp-cat: reads ctp traces. main.c only turns the command line into ctp_cat_options and hands
 * them to the part that does the work. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "cat/duration.h"
#include "cat/snapshot_request.h"
#include "ctp/version.h"

static void print_help(FILE *f)
{
	fputs("Usage: ctp-cat [OPTION]... FILE\n"
	      "Print a ctp trace (a zstd-compressed JSON Lines file) as JSON Lines.\n"
	      "FILE - reads standard input.\n"
	      "\n"
	      "Lines are passed through unchanged. Lines that are not JSON objects are\n"
	      "reported on stderr and skipped. A trace cut off mid-frame (a crash, a full disk,\n"
	      "`head -c`) is printed up to its last complete line, then the cut is reported.\n"
	      "\n"
	      "Views (docs/ctp-cat.md):\n"
	      "      --format=FMT     jsonl (default), text, csv (one row per switch),\n"
	      "                       corotracer (coroTracer's records), chrome (Chrome\n"
	      "                       JSON), perfetto (Perfetto's protobuf trace)\n"
	      "  -f, --follow         the trace is still being written: wait for more, stop\n"
	      "                       when its writer is done or on Ctrl-C\n"
	      "\n"
	      "Live snapshots (docs/ctp-cat.md): every coroutine's state, written into the\n"
	      "trace by its collector while the program runs:\n"
	      "      --snapshot             ask the ctp-collector writing FILE for a snapshot\n"
	      "                             now (it has FILE open for writing; the same as\n"
	      "                             kill -USR1 on it), then exit\n"
	      "      --snapshot-every=TIME  with --follow: ask for one when FILE is there,\n"
	      "                             then every TIME (10s, 1m)\n"
	      "Filters (repeatable, or comma lists; definitions that kept lines refer to\n"
	      "are kept too, so the output stays a whole trace):\n"
	      "      --pid=PID        lines of these processes\n"
	      "      --coro=ID        lines of these coroutines (coro, from or to)\n"
	      "      --tid=TID        lines of these threads\n"
	      "      --type=TYPE      lines of these types (switch, coro, state, ...)\n"
	      "      --since=TIME     lines at or after TIME, --until=TIME at or before: a\n"
	      "      --until=TIME     duration since the trace's start (1.5s, 200ms, 3us), or\n"
	      "                       digits alone: an absolute time in ns, as the trace has\n"
	      "\n"
	      "Export (docs/schema.md): the trace goes into a database instead, one\n"
	      "transaction per trace; exporting the same trace twice is refused.\n"
	      "      --sqlite DB        into the SQLite file DB (made if missing)\n"
	      "      --postgres URI     into PostgreSQL (a libpq URI or conninfo string)\n"
	      "      --mysql URI        into MySQL/MariaDB:\n"
	      "                         mysql://[USER[:PASSWORD]@][HOST[:PORT]]/DB[?socket=PATH]\n"
	      "      --replace          replace the trace if it was exported before\n"
	      "      --print-schema DB  print the schema's DDL for sqlite, postgres or mysql\n"
	      "\n"
	      "Report (docs/report.md): what went wrong, instead of the lines:\n"
	      "      --report               lost wakeups, missed readiness, crashes, stuck,\n"
	      "                             hogging and leaked coroutines, with their stacks;\n"
	      "                             with --follow, a report at each snapshot and at\n"
	      "                             the end (a terminal is redrawn, other outputs get\n"
	      "                             one report after another)\n"
	      "      --json                 with --report: the same as one JSON document\n"
	      "                             (always with full C++ names); with --follow,\n"
	      "                             one document per line, one line per report\n"
	      "      --full-names           C++ names with their template arguments (the\n"
	      "                             text report and --format=text write each\n"
	      "                             outermost <...> as <...>)\n"
	      "      --missed-after=TIME    readiness not followed by a resume within TIME is\n"
	      "                             missed (default 1s)\n"
	      "      --never-yielded-after=TIME  a coroutine running TIME without a switch\n"
	      "                             hogs its thread (default 1s)\n"
	      "Durations always carry a unit: ns, us, ms, s, m or h (1.5s, 200ms); a bare number\n"
	      "is not a duration.\n"
	      "\n"
	      "Dashboard (docs/dashboard.md):\n"
	      "      --html PAGE            write one self-contained HTML page: summary,\n"
	      "                             findings, stuck groups, per-thread timeline and\n"
	      "                             per-coroutine histories\n"
	      "\n"
	      "  -h, --help     show this help and exit\n"
	      "  -V, --version  show the version and exit\n"
	      "\n"
	      "Exit status:\n"
	      "  0  the trace was read whole\n"
	      "  1  the trace is readable but incomplete: cut off, damaged after some frames,\n"
	      "     with lines that were skipped, without its end line, missing lines its end\n"
	      "     line counts (a full disk), or followed by more (a second trace); or\n"
	      "     still being written (a collector has it open; still empty, no output)\n"
	      "  2  not a ctp trace (not zstd, no whole trace header), usage error, or I/O\n"
	      "     error; outputs (--html, --sqlite) are then left untouched\n"
	      "  3  --report found a crash, a lost wakeup or a missed readiness (this wins\n"
	      "     over 1, not over 2); with --follow, the last report did\n"
	      "--snapshot exits 0 when asked, 2 when no ctp-collector writes FILE.\n"
	      "If standard output is closed early (ctp-cat t | head), ctp-cat stops reading\n"
	      "quietly; the status then covers only what was read (0, or 1 after bad lines).\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("ctp-cat: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'ctp-cat --help'.\n", stderr);
	return CTP_CAT_EXIT_FAILURE;
}

/* Long options without a short form. */
enum { OPT_SQLITE = 256, OPT_POSTGRES, OPT_MYSQL, OPT_REPLACE, OPT_PRINT_SCHEMA };

/* The views' options (filters, formats, --follow). */
enum { OPT_FORMAT = 512, OPT_PID, OPT_CORO, OPT_TID, OPT_TYPE, OPT_SINCE, OPT_UNTIL };

/* --report's options. */
enum { OPT_REPORT = 768, OPT_JSON, OPT_MISSED_AFTER, OPT_NEVER_YIELDED_AFTER, OPT_FULL_NAMES };

/* --html's option. */
enum { OPT_HTML = 1024 };

/* Live snapshots' options. */
enum { OPT_SNAPSHOT = 1280, OPT_SNAPSHOT_EVERY };

/* Handles one of the views' options; returns 0, or the exit code of a usage error. */
static int view_option(struct ctp_cat_options *opt, int c, const char *arg)
{
	static const struct {
		const char *name;
		enum ctp_cat_format format;
	} formats[] = {
		{"jsonl", CTP_CAT_FORMAT_JSONL},   {"text", CTP_CAT_FORMAT_TEXT},
		{"csv", CTP_CAT_FORMAT_CSV},	   {"corotracer", CTP_CAT_FORMAT_COROTRACER},
		{"chrome", CTP_CAT_FORMAT_CHROME}, {"perfetto", CTP_CAT_FORMAT_PERFETTO},
	};
	struct ctp_cat_filter_spec *f = &opt->filter;
	switch (c) {
	case OPT_FORMAT:
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			if (strcmp(arg, formats[i].name) == 0) {
				opt->format = formats[i].format;
				return 0;
			}
		}
		return usage_error(
			"unknown --format '%s' (jsonl, text, csv, corotracer, chrome, perfetto)",
			arg);
	case OPT_PID:
	case OPT_CORO:
	case OPT_TID: {
		struct ctp_cat_ids *ids = c == OPT_PID	  ? &f->pids
					  : c == OPT_CORO ? &f->coros
							  : &f->tids;
		if (ctp_cat_ids_add(ids, arg) < 0)
			return usage_error("not a list of numbers: '%s'", arg);
		return 0;
	}
	case OPT_TYPE:
		if (ctp_cat_filter_add_types(f, arg) < 0)
			return usage_error("not a list of line types: '%s'", arg);
		return 0;
	case OPT_SINCE:
	case OPT_UNTIL: {
		bool since = c == OPT_SINCE;
		if (!ctp_cat_parse_time(arg, since ? &f->since : &f->until))
			return usage_error("not a time (ns, or 1.5s, 200ms, 3us, 40ns): '%s'", arg);
		*(since ? &f->has_since : &f->has_until) = true;
		return 0;
	}
	}
	return 0;
}

/* --snapshot FILE: asks the collector writing FILE for a snapshot; `args` is how many
 * arguments there were besides the program's name (FILE and --snapshot alone). */
static int ask_snapshot(const struct ctp_cat_options *opt, int args)
{
	if (args != 2)
		return usage_error("%s", "--snapshot goes alone, with the FILE being written");
	if (strcmp(opt->input, "-") == 0)
		return usage_error("%s", "--snapshot needs a FILE, not standard input");
	pid_t pid = ctp_cat_request_snapshot(opt->input);
	if (pid < 0) {
		fprintf(stderr, "ctp-cat: %s: cannot ask for a snapshot: %s\n", opt->input,
			errno == ESRCH ? "no ctp-collector is writing it" : strerror(errno));
		return CTP_CAT_EXIT_FAILURE;
	}
	printf("ctp-cat: asked ctp-collector (pid %d) for a snapshot into %s\n", (int)pid,
	       opt->input);
	return fflush(stdout) == 0 ? CTP_CAT_EXIT_OK : CTP_CAT_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"follow", no_argument, NULL, 'f'},
		{"pid", required_argument, NULL, OPT_PID},
		{"coro", required_argument, NULL, OPT_CORO},
		{"tid", required_argument, NULL, OPT_TID},
		{"type", required_argument, NULL, OPT_TYPE},
		{"since", required_argument, NULL, OPT_SINCE},
		{"until", required_argument, NULL, OPT_UNTIL},
		{"sqlite", required_argument, NULL, OPT_SQLITE},
		{"postgres", required_argument, NULL, OPT_POSTGRES},
		{"mysql", required_argument, NULL, OPT_MYSQL},
		{"replace", no_argument, NULL, OPT_REPLACE},
		{"print-schema", required_argument, NULL, OPT_PRINT_SCHEMA},
		{"report", no_argument, NULL, OPT_REPORT},
		{"json", no_argument, NULL, OPT_JSON},
		{"missed-after", required_argument, NULL, OPT_MISSED_AFTER},
		{"never-yielded-after", required_argument, NULL, OPT_NEVER_YIELDED_AFTER},
		{"full-names", no_argument, NULL, OPT_FULL_NAMES},
		{"html", required_argument, NULL, OPT_HTML},
		{"snapshot", no_argument, NULL, OPT_SNAPSHOT},
		{"snapshot-every", required_argument, NULL, OPT_SNAPSHOT_EVERY},
		{NULL, 0, NULL, 0},
	};
	struct ctp_cat_options opt = {.format = CTP_CAT_FORMAT_JSONL};
	ctp_analysis_options_default(&opt.analysis);
	bool report = false, json = false, thresholds = false, snapshot = false;

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":hVf", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			print_help(stdout);
			return fflush(stdout) == 0 ? CTP_CAT_EXIT_OK : CTP_CAT_EXIT_FAILURE;
		case 'V':
			printf("ctp-cat (%s)\n", ctp_version_string());
			return fflush(stdout) == 0 ? CTP_CAT_EXIT_OK : CTP_CAT_EXIT_FAILURE;
		case OPT_SQLITE:
		case OPT_POSTGRES:
		case OPT_MYSQL:
			if (opt.export_target)
				return usage_error("%s", "one export target only");
			opt.format = c == OPT_SQLITE	 ? CTP_CAT_FORMAT_SQLITE
				     : c == OPT_POSTGRES ? CTP_CAT_FORMAT_POSTGRES
							 : CTP_CAT_FORMAT_MYSQL;
			opt.export_target = optarg;
			break;
		case OPT_REPLACE:
			opt.export_replace = true;
			break;
		case OPT_PRINT_SCHEMA:
			return ctp_cat_print_schema(optarg, stdout);
		case 'f':
			opt.follow = true;
			break;
		case OPT_REPORT:
			report = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_FULL_NAMES:
			opt.full_names = true;
			break;
		case OPT_HTML:
			opt.html_path = optarg;
			break;
		case OPT_SNAPSHOT:
			snapshot = true;
			break;
		case OPT_SNAPSHOT_EVERY:
			if (!ctp_cat_parse_duration(optarg, &opt.snapshot_every_ns) ||
			    !opt.snapshot_every_ns)
				return usage_error(
					"not a duration with a unit (10s, 1m, ...): '%s'", optarg);
			break;
		case OPT_MISSED_AFTER:
		case OPT_NEVER_YIELDED_AFTER:
			if (!ctp_cat_parse_duration(optarg,
						    c == OPT_MISSED_AFTER
							    ? &opt.analysis.missed_after_ns
							    : &opt.analysis.never_yielded_after_ns))
				return usage_error(
					"not a duration with a unit (500ms, 2s, ...): '%s'",
					optarg);
			thresholds = true;
			break;
		case OPT_FORMAT:
		case OPT_PID:
		case OPT_CORO:
		case OPT_TID:
		case OPT_TYPE:
		case OPT_SINCE:
		case OPT_UNTIL: {
			int bad = view_option(&opt, c, optarg);
			if (bad)
				return bad;
			break;
		}
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt) {
				char shortopt[] = {'-', (char)optopt, '\0'};
				return usage_error("unknown option '%s'", shortopt);
			}
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("%s", "no FILE given (use - for standard input)");
	if (argc - optind > 1)
		return usage_error("one FILE only, got another: '%s'", argv[optind + 1]);
	opt.input = argv[optind];
	if (snapshot)
		return ask_snapshot(&opt, argc - 1);
	if (opt.snapshot_every_ns && !opt.follow)
		return usage_error("%s", "--snapshot-every needs --follow");
	if (opt.follow && strcmp(opt.input, "-") == 0)
		return usage_error("%s", "--follow needs a FILE, not standard input");
	if (opt.export_replace && !opt.export_target)
		return usage_error("%s", "--replace needs --sqlite, --postgres or --mysql");
	if ((json || thresholds) && !report)
		return usage_error("%s", "--json, --missed-after and --never-yielded-after need "
					 "--report");
	if (opt.full_names && !report && opt.format != CTP_CAT_FORMAT_TEXT)
		return usage_error("%s", "--full-names needs --report or --format=text");
	if (report && (opt.format != CTP_CAT_FORMAT_JSONL || opt.export_target))
		return usage_error("%s", "--report goes alone: no --format or export");
	if (report)
		opt.format = json ? CTP_CAT_FORMAT_REPORT_JSON : CTP_CAT_FORMAT_REPORT;
	if (opt.html_path &&
	    (opt.format != CTP_CAT_FORMAT_JSONL || opt.export_target || opt.follow))
		return usage_error("%s",
				   "--html goes alone: no --format, export, --report or --follow");
	if (opt.html_path)
		opt.format = CTP_CAT_FORMAT_HTML;

	/* A closed output must show up as EPIPE from write, handled quietly, not as death by
	 * SIGPIPE in the middle of a pipeline. */
	signal(SIGPIPE, SIG_IGN);
	int status = ctp_cat_run(&opt);
	ctp_cat_filter_spec_free(&opt.filter);
	return status;
}

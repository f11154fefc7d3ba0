/* ctp-cat: reads ctp traces. main.c only turns the command line into ctp_cat_options and hands
 * them to the part that does the work. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "cat/cat.h"
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
	      "Export (docs/schema.md): the trace goes into a database instead, one\n"
	      "transaction per trace; exporting the same trace twice is refused.\n"
	      "      --sqlite DB        into the SQLite file DB (made if missing)\n"
	      "      --postgres URI     into PostgreSQL (a libpq URI or conninfo string)\n"
	      "      --mysql URI        into MySQL/MariaDB:\n"
	      "                         mysql://[USER[:PASSWORD]@][HOST[:PORT]]/DB[?socket=PATH]\n"
	      "      --replace          replace the trace if it was exported before\n"
	      "      --print-schema DB  print the schema's DDL for sqlite, postgres or mysql\n"
	      "\n"
	      "  -h, --help     show this help and exit\n"
	      "  -V, --version  show the version and exit\n"
	      "\n"
	      "Exit status:\n"
	      "  0  the trace was read whole\n"
	      "  1  the trace is readable but incomplete: cut off, damaged after some frames,\n"
	      "     or with lines that were skipped\n"
	      "  2  not a ctp trace (not zstd, no trace header), usage error, or I/O error\n"
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"sqlite", required_argument, NULL, OPT_SQLITE},
		{"postgres", required_argument, NULL, OPT_POSTGRES},
		{"mysql", required_argument, NULL, OPT_MYSQL},
		{"replace", no_argument, NULL, OPT_REPLACE},
		{"print-schema", required_argument, NULL, OPT_PRINT_SCHEMA},
		{NULL, 0, NULL, 0},
	};
	struct ctp_cat_options opt = {.format = CTP_CAT_FORMAT_JSONL};

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
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
	if (opt.export_replace && !opt.export_target)
		return usage_error("%s", "--replace needs --sqlite, --postgres or --mysql");

	/* A closed output must show up as EPIPE from write, handled quietly, not as death by
	 * SIGPIPE in the middle of a pipeline. */
	signal(SIGPIPE, SIG_IGN);
	return ctp_cat_run(&opt);
}

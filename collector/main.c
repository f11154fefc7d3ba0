/* ctp-collector: harvests the shared-memory segments of traced processes and writes the trace.
 * The command line is fixed: the launcher (ctp-run) and the preload's standalone mode use it. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/address_space.h"
#include "collector/loop.h"
#include "ctp/deep_stack.h"
#include "ctp/version.h"
#include "ctp/xalloc.h"
#include "ctp/zwriter.h"

/* Level 1: on switch-heavy traces it compresses about as well as 3 at several times the speed
 * (measured; see the commit that set it), and the collector must keep up with millions of
 * switches a second on one core. */
#define DEFAULT_LEVEL CTP_ZWRITER_LEVEL_AUTO
#define DEFAULT_GRACE_MS 2000
#define MAX_GRACE_MS (24 * 3600 * 1000)
#define DEFAULT_HOLD_MS 2000
#define MAX_HOLD_MS 60000
/* Records harvested and not yet written are held in memory up to this bound; beyond it the
 * traced threads' rings fill and drop records (counted). 256 MiB is minutes of a slow disk or
 * a few seconds of the busiest programs. */
#define DEFAULT_SPOOL_MB 256
/* At least the two chunks one ring's turn may need. */
#define MIN_SPOOL_MB 1
#define MAX_SPOOL_MB (1 << 20)
/* Kept for the collector's tables when memory runs out (ctp/xalloc.h): a run that failed to
 * grow one by 256 bytes under 146 MiB of `ulimit -v` ended its trace there. */
#define XALLOC_RESERVE_BYTES ((size_t)8 << 20)

static void usage(FILE *f)
{
	fputs("usage: ctp-collector --socket PATH --output FILE [--ready-fd N] [--summary]\n"
	      "                     [--level N|auto] [--grace-ms N] [--spool-mb N] "
	      "[--remove-socket-dir]\n"
	      "Listens on the Unix socket PATH for traced processes and writes their trace to "
	      "FILE\n"
	      "(zstd-compressed JSON Lines).\n"
	      "  --socket PATH   socket to create (its directory should be private)\n"
	      "  --output FILE   trace file to write\n"
	      "  --ready-fd N    write \"ready\\n\" to fd N once listening, then close it; end\n"
	      "                  if nobody reads it, or no process comes within the grace\n"
	      "                  period after it (without it: wait for the first process)\n"
	      "  --summary       print a one-line summary on stderr at the end\n"
	      "  --level N|auto  zstd level, -7 to 22; auto (default): 1, or -3 for the\n"
	      "                  frames of a busy trace (over 4 MiB of text a second)\n"
	      "  --grace-ms N    how long to wait for processes after the launcher has gone,\n"
	      "                  or after the last one when one it announced may still\n"
	      "                  come, or after \"ready\" for the first (default\n"
	      "                  CTP_GRACE_MS, else 2000)\n"
	      "  --hold-ms N     while the CPUs are busy, hold records unconverted for up to N\n"
	      "                  ms, so that the traced program has the CPUs (0: never; default\n"
	      "                  CTP_HOLD_MS, else 2000)\n"
	      "  --spool-mb N    memory for records harvested but not yet written, in MiB\n"
	      "                  (default CTP_SPOOL_MB, else 256; under an address-space limit\n"
	      "                  at most an eighth of the room it leaves; when it is full,\n"
	      "                  records are dropped and counted)\n"
	      "  --remove-socket-dir  at the end, remove the socket's directory too (when empty)\n"
	      "  --help, --version\n",
	      f);
}

static bool parse_int(const char *s, long min, long max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = (int)v;
	return true;
}

/* The collector is started by ctp-run or by the preload, with the program's environment: this is
 * how a user reaches a setting in both forms. A bad value is ignored, as the preload ignores its
 * own. */
static int int_from_env(const char *name, int min, int max, int fallback)
{
	const char *s = getenv(name);
	int v;
	if (!s || !*s)
		return fallback;
	if (parse_int(s, min, max, &v))
		return v;
	fprintf(stderr, "ctp-collector: ignoring %s=%s: not a number from %d to %d\n", name, s, min,
		max);
	return fallback;
}

static int collector_main(int argc, char **argv)
{
	enum {
		OPT_SOCKET = 256,
		OPT_OUTPUT,
		OPT_READY,
		OPT_SUMMARY,
		OPT_LEVEL,
		OPT_GRACE,
		OPT_SPOOL,
		OPT_HOLD,
		OPT_REMOVE_DIR,
		OPT_HELP,
		OPT_VERSION
	};
	static const struct option opts[] = {
		{"socket", required_argument, NULL, OPT_SOCKET},
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"ready-fd", required_argument, NULL, OPT_READY},
		{"summary", no_argument, NULL, OPT_SUMMARY},
		{"level", required_argument, NULL, OPT_LEVEL},
		{"grace-ms", required_argument, NULL, OPT_GRACE},
		{"spool-mb", required_argument, NULL, OPT_SPOOL},
		{"hold-ms", required_argument, NULL, OPT_HOLD},
		{"remove-socket-dir", no_argument, NULL, OPT_REMOVE_DIR},
		{"help", no_argument, NULL, OPT_HELP},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	struct ctp_collector_options o = {
		.ready_fd = -1,
		.level = DEFAULT_LEVEL,
		.grace_ms = int_from_env("CTP_GRACE_MS", 0, MAX_GRACE_MS, DEFAULT_GRACE_MS),
		.hold_ms = int_from_env("CTP_HOLD_MS", 0, MAX_HOLD_MS, DEFAULT_HOLD_MS),
	};
	int spool_mb = int_from_env("CTP_SPOOL_MB", MIN_SPOOL_MB, MAX_SPOOL_MB, DEFAULT_SPOOL_MB);
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			o.socket_path = optarg;
			break;
		case OPT_OUTPUT:
			o.output = optarg;
			break;
		case OPT_READY:
			if (!parse_int(optarg, 0, 1 << 30, &o.ready_fd)) {
				fprintf(stderr, "ctp-collector: bad --ready-fd: %s\n", optarg);
				return 1;
			}
			break;
		case OPT_SUMMARY:
			o.summary = true;
			break;
		case OPT_LEVEL:
			if (strcmp(optarg, "auto") == 0)
				o.level = CTP_ZWRITER_LEVEL_AUTO;
			else if (!parse_int(optarg, -7, 22, &o.level)) {
				fprintf(stderr, "ctp-collector: bad --level: %s\n", optarg);
				return 1;
			}
			break;
		case OPT_GRACE:
			if (!parse_int(optarg, 0, MAX_GRACE_MS, &o.grace_ms)) {
				fprintf(stderr, "ctp-collector: bad --grace-ms: %s\n", optarg);
				return 1;
			}
			break;
		case OPT_SPOOL:
			if (!parse_int(optarg, MIN_SPOOL_MB, MAX_SPOOL_MB, &spool_mb)) {
				fprintf(stderr, "ctp-collector: bad --spool-mb: %s\n", optarg);
				return 1;
			}
			break;
		case OPT_HOLD:
			if (!parse_int(optarg, 0, MAX_HOLD_MS, &o.hold_ms)) {
				fprintf(stderr, "ctp-collector: bad --hold-ms: %s (0 to %d)\n",
					optarg, MAX_HOLD_MS);
				return 1;
			}
			break;
		case OPT_REMOVE_DIR:
			o.remove_socket_dir = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("%s\n", ctp_version_string());
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc || !o.socket_path || !o.output) {
		fputs("ctp-collector: --socket and --output are required\n", stderr);
		usage(stderr);
		return 1;
	}
	o.spool_bytes = ctp_spool_bytes_within_address_space((uint64_t)spool_mb << 20);
	ctp_xalloc_reserve(XALLOC_RESERVE_BYTES);
	return ctp_collector_run(&o);
}

/* Symbolizing runs libdw, which needs a deeper stack than a small `ulimit -s` leaves. */
int main(int argc, char **argv)
{
	/* One malloc arena for both threads: the harvester allocates little (its spool is
	 * mapped), and an arena of its own would take 64 MiB of address space (128 while glibc
	 * makes it), room that under an address-space limit the rings and libdw need. */
	mallopt(M_ARENA_MAX, 1);
	return ctp_main_on_deep_stack(collector_main, argc, argv);
}

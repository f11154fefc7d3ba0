/* ctp-pstack PID: every coroutine of a traced, running process, now (docs/ctp-pstack.md). It
 * reads the process's segment through a read-only mapping of the memfd the process holds: the
 * process is neither stopped nor written to, and it cannot tell that it was looked at. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctp/symcache.h"
#include "ctp/version.h"
#include "pstack/groups.h"
#include "pstack/locate.h"
#include "pstack/snapshot.h"
#include "pstack/view.h"

static void usage(FILE *f)
{
	fputs("usage: ctp-pstack [--json] PID\n"
	      "\n"
	      "Shows every coroutine of a running process traced by ctp (under ctp-run, or with\n"
	      "LD_PRELOAD=libctp_preload.so): its id, kind, entry function, state and since when,\n"
	      "thread, the fd it waits on, and its symbolized suspend stack, grouped by stack.\n"
	      "The process is not stopped.\n"
	      "\n"
	      "      --json           one JSON document instead of text (docs/ctp-pstack.md)\n"
	      "      --no-symbols     addresses only: do not read the process's binaries\n"
	      "  -h, --help           show this help\n"
	      "      --version        show the version\n"
	      "\n"
	      "Exit status: 0 shown, 1 no such process, 2 usage, 3 the process is not traced,\n"
	      "4 permission denied, 5 its segment cannot be read, 6 the output cannot be "
	      "written.\n",
	      f);
}

/* The process's command line, its arguments joined by spaces (for the header only). */
static void read_command(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
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

enum { OPT_JSON = 256, OPT_NO_SYMBOLS, OPT_VERSION };

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"no-symbols", no_argument, NULL, OPT_NO_SYMBOLS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{0},
	};
	bool json = false, symbols = true;
	int opt;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_SYMBOLS:
			symbols = false;
			break;
		case 'h':
			usage(stdout);
			return PSTACK_EXIT_OK;
		case OPT_VERSION:
			printf("%s\n", ctp_version_string());
			return PSTACK_EXIT_OK;
		default:
			usage(stderr);
			return PSTACK_EXIT_USAGE;
		}
	}
	pid_t pid;
	if (optind + 1 != argc || !parse_pid(argv[optind], &pid)) {
		if (optind + 1 == argc)
			fprintf(stderr, "ctp-pstack: not a process id: %s\n", argv[optind]);
		usage(stderr);
		return PSTACK_EXIT_USAGE;
	}

	struct pstack_segment seg;
	char why[512];
	enum pstack_exit status = pstack_locate(pid, &seg, why, sizeof(why));
	if (status != PSTACK_EXIT_OK) {
		fprintf(stderr, "ctp-pstack: %s\n", why);
		return status;
	}
	struct pstack_snapshot snap;
	pstack_snapshot_take(&seg, &snap);
	struct pstack_groups groups;
	pstack_groups_make(&snap, &groups);

	char command[512];
	read_command(pid, command, sizeof(command));
	struct ctp_symcache syms = {0};
	ctp_symcache_read_modules(&syms, &seg.view);
	struct pstack_view v = {
		.snap = &snap,
		.groups = &groups,
		.syms = &syms,
		.symbolizer = symbols ? ctp_symbolizer_new() : NULL,
		.segment = &seg.view,
		.command = command,
		.out = stdout,
	};
	if (json)
		pstack_write_json(&v);
	else
		pstack_write_text(&v);
	int out_status =
		fflush(stdout) == 0 && !ferror(stdout) ? PSTACK_EXIT_OK : PSTACK_EXIT_OUTPUT;
	if (out_status != PSTACK_EXIT_OK)
		fprintf(stderr, "ctp-pstack: cannot write the output: %s\n", strerror(errno));

	ctp_symbolizer_free(v.symbolizer);
	ctp_symcache_free(&syms);
	pstack_groups_free(&groups);
	pstack_snapshot_free(&snap);
	pstack_segment_close(&seg);
	return out_status;
}

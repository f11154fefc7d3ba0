#include "cat/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Lines between looks at the clock: a look costs a syscall-free clock read, but not for free. */
#define LINES_PER_LOOK 65536
#define SECONDS_PER_DRAW 0.5

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void ctp_cat_progress_start(struct ctp_cat_progress *p, const char *path, const char *name)
{
	memset(p, 0, sizeof(*p));
	struct stat st;
	if (!isatty(STDERR_FILENO) || strcmp(path, "-") == 0 || stat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size <= 0)
		return;
	p->on = true;
	p->name = name;
	p->size = (uint64_t)st.st_size;
	p->start = p->last = now();
}

void ctp_cat_progress_tick(struct ctp_cat_progress *p, const struct ctp_trace_reader *r,
			   uint64_t lines)
{
	if (!p->on || lines % LINES_PER_LOOK != 0)
		return;
	double t = now();
	if (t - p->last < SECONDS_PER_DRAW)
		return;
	p->last = t;
	uint64_t read = ctp_trace_reader_input_bytes(r);
	double rate = (double)lines / (t - p->start);
	fprintf(stderr,
		"\rctp-cat: %s: %" PRIu64 " lines, %.0f%% of the file, %.2f M lines/s\033[K",
		p->name, lines, 100.0 * (double)read / (double)p->size, rate / 1e6);
	p->shown = true;
}

void ctp_cat_progress_end(struct ctp_cat_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

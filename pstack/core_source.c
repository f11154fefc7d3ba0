#include "pstack/core_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctp/core_file.h"
#include "ctp/segment.h"
#include "ctp/xalloc.h"

/* The name the preload gives memfd_create (preload/segment.c), as /proc/PID/maps shows it. */
static const char SEGMENT_NAME[] = "/memfd:ctp-segment";

static bool is_segment(const struct ctp_core_mapping *m)
{
	size_t n = strlen(SEGMENT_NAME);
	return strncmp(m->path, SEGMENT_NAME, n) == 0 &&
	       (m->path[n] == '\0' || strcmp(m->path + n, " (deleted)") == 0);
}

static int by_file_off(const void *a, const void *b)
{
	const struct ctp_core_mapping *x = *(const struct ctp_core_mapping *const *)a;
	const struct ctp_core_mapping *y = *(const struct ctp_core_mapping *const *)b;
	return (x->file_off > y->file_off) - (x->file_off < y->file_off);
}

/* A range of the segment that cannot be copied out of the core, said for the user. */
static enum pstack_exit missing(enum ctp_core_range r, const struct ctp_core *core,
				const char *path, char *why, size_t why_len)
{
	if (r == CTP_CORE_RANGE_TRUNCATED) {
		snprintf(why, why_len,
			 "%s is truncated: it ends before the ctp segment of pid %u (was the disk "
			 "full, or ulimit -c too small, when it was written?)",
			 path, core->pid);
		return PSTACK_EXIT_TRUNCATED;
	}
	snprintf(
		why, why_len,
		"the ctp segment of pid %u was mapped but not dumped into %s: check "
		"/proc/PID/coredump_filter, whose bit 1 (anonymous shared memory, which a memfd is "
		"for the kernel) and, for gcore, bit 3 (file-backed shared memory) must be set, as "
		"in the default 0x33",
		core->pid, path);
	return PSTACK_EXIT_NOT_DUMPED;
}

/* Copies the file bytes [0, size) of the segment out of the extents that map them. */
static enum pstack_exit copy_segment(const struct ctp_core *core,
				     const struct ctp_core_mapping **ext, size_t n, uint8_t *buf,
				     uint64_t size, const char *path, char *why, size_t why_len)
{
	qsort(ext, n, sizeof(*ext), by_file_off);
	uint64_t covered = 0; /* [0, covered) copied */
	for (size_t i = 0; i < n && covered < size; i++) {
		const struct ctp_core_mapping *m = ext[i];
		uint64_t len = m->end - m->start;
		if (m->file_off > covered)
			break; /* a hole: no mapping holds those bytes */
		if (m->file_off + len <= covered)
			continue;
		uint64_t from = covered - m->file_off;
		uint64_t take = len - from < size - covered ? len - from : size - covered;
		enum ctp_core_range r = ctp_core_copy(core, m->start + from, buf + covered, take);
		if (r != CTP_CORE_RANGE_PRESENT)
			return missing(r, core, path, why, why_len);
		covered += take;
	}
	if (covered < size) {
		snprintf(
			why, why_len,
			"the ctp segment in %s is incomplete: bytes from %llu of its %llu were not "
			"mapped when the core was made",
			path, (unsigned long long)covered, (unsigned long long)size);
		return PSTACK_EXIT_BAD_SEGMENT;
	}
	return PSTACK_EXIT_OK;
}

static enum pstack_exit find_segment(struct pstack_source *src, const char *path, char *why,
				     size_t why_len)
{
	const struct ctp_core *core = src->core;
	const struct ctp_core_mapping **ext = ctp_xcalloc(core->nmaps + 1, sizeof(*ext));
	size_t n = 0;
	const struct ctp_core_mapping *first = NULL;
	uint64_t mapped = 0; /* bytes of the segment's extents */
	for (size_t i = 0; i < core->nmaps; i++) {
		if (!is_segment(&core->maps[i]))
			continue;
		ext[n++] = &core->maps[i];
		mapped += core->maps[i].end - core->maps[i].start;
		if (core->maps[i].file_off == 0 && !first)
			first = &core->maps[i];
	}
	enum pstack_exit status = PSTACK_EXIT_OK;
	struct ctp_header h;
	enum ctp_core_range r;
	if (core->nmaps == 0) {
		snprintf(
			why, why_len,
			"%s has no NT_FILE note: it does not say what was mapped where, so its ctp "
			"segment cannot be found",
			path);
		status = PSTACK_EXIT_NOT_TRACED;
	} else if (!first) {
		snprintf(
			why, why_len,
			"pid %u (%s) was not traced by ctp: no ctp segment (%s) among the mappings "
			"of %s",
			core->pid, core->fname, SEGMENT_NAME, path);
		status = PSTACK_EXIT_NOT_TRACED;
	} else if ((r = ctp_core_copy(core, first->start, &h, sizeof(h))) !=
		   CTP_CORE_RANGE_PRESENT) {
		status = missing(r, core, path, why, why_len);
	} else if (h.magic != CTP_MAGIC) {
		snprintf(why, why_len, "the ctp segment in %s has no cTP magic", path);
		status = PSTACK_EXIT_BAD_SEGMENT;
	} else if (h.segment_size < sizeof(h) || h.segment_size > h.segment_max ||
		   h.segment_size > mapped) {
		/* Bounded by what was mapped, not by the size of the core: a truncated core
		 * is said to be one by the copy below. */
		snprintf(why, why_len,
			 "the ctp segment in %s claims %llu bytes, of which %llu were mapped", path,
			 (unsigned long long)h.segment_size, (unsigned long long)mapped);
		status = PSTACK_EXIT_BAD_SEGMENT;
	} else {
		uint8_t *buf = ctp_xcalloc(1, h.segment_size);
		status = copy_segment(core, ext, n, buf, h.segment_size, path, why, why_len);
		src->view = (struct ctp_segment_view){.base = buf, .size = h.segment_size};
		char reason[160];
		if (status == PSTACK_EXIT_OK &&
		    !ctp_view_check_header(&src->view, reason, sizeof(reason))) {
			snprintf(why, why_len, "the ctp segment in %s cannot be read: %s", path,
				 reason);
			status = PSTACK_EXIT_BAD_SEGMENT;
		}
	}
	free(ext);
	return status;
}

enum pstack_exit pstack_open_core(const char *path, const char *executable,
				  struct pstack_source *out, char *why, size_t why_len)
{
	memset(out, 0, sizeof(*out));
	out->memfd = -1;
	out->core_path = path;
	out->core = ctp_xcalloc(1, sizeof(*out->core));
	enum ctp_core_status st = ctp_core_open(path, out->core, why, why_len);
	if (st != CTP_CORE_OK) {
		int err = errno;
		free(out->core);
		out->core = NULL;
		if (st == CTP_CORE_NOT_CORE)
			return PSTACK_EXIT_NOT_CORE;
		if (st == CTP_CORE_TRUNCATED)
			return PSTACK_EXIT_TRUNCATED;
		return err == EACCES || err == EPERM ? PSTACK_EXIT_DENIED : PSTACK_EXIT_NO_PROCESS;
	}
	out->pid = out->core->pid;
	struct stat sb;
	if (fstat(out->core->fd, &sb) == 0)
		out->core_written_ns =
			(int64_t)sb.st_mtim.tv_sec * 1000000000ll + sb.st_mtim.tv_nsec;
	out->executable = executable ? executable : ctp_core_executable(out->core);
	enum pstack_exit status = find_segment(out, path, why, why_len);
	if (status != PSTACK_EXIT_OK)
		pstack_core_close(out);
	else if (out->core->truncated)
		fprintf(stderr,
			"ctp-pstack: warning: %s is truncated: the segment is whole, but memory "
			"past "
			"the file's end is missing, and stacks that lie there are cut short\n",
			path);
	return status;
}

void pstack_core_close(struct pstack_source *src)
{
	free(src->view.base);
	src->view.base = NULL;
	src->view.size = 0;
	if (src->core) {
		ctp_core_close(src->core);
		free(src->core);
		src->core = NULL;
	}
}

#define _GNU_SOURCE /* program_invocation_short_name: the collector's or ctp-pstack's */
#include "ctp/zwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "ctp/clock.h"
#include "ctp/jsonw.h"
#include "ctp/trace_file.h"

struct ctp_zwriter {
	int fd;
	char *path;
	ZSTD_CCtx *cctx;
	/* The text of the frame being built: lines are written into it in place (ctp/emit.c),
	 * so that a line is never copied before zstd reads it. */
	struct ctp_jsonw text;
	uint64_t frame_start_ns; /* when the frame's first byte arrived */
	bool adaptive;		 /* level auto (ctp/zwriter.h) */
	int level;		 /* the level set in cctx */
	void *out;		 /* compressed frame */
	size_t out_cap;
	uint64_t good_off; /* file offset after the last frame written whole */
	struct ctp_zwriter_stats st;
};

/* Room for the line that takes a frame past CTP_ZWRITER_FRAME_BYTES, so that the buffers
 * need not grow for any usual line; a longer one (a deep stack of long C++ names) grows them. */
enum { FRAME_SLACK = 64 * 1024 };

struct ctp_zwriter *ctp_zwriter_open(const char *path, int level)
{
	char why[512];
	int fd = ctp_trace_file_create(path, why, sizeof(why));
	return fd < 0 ? NULL : ctp_zwriter_open_fd(fd, path, level);
}

/* zstd's fast levels (its `fast` strategy: level 1 and below, except 0, zstd's default level 3;
 * both levels of level auto are fast) find matches in a table of 2^13 four-byte entries for a
 * frame of 1 MiB: 32 KiB, the size of a core's whole first-level data cache, which the text being
 * compressed also streams through. With 2^11 entries trace text compresses 5-45% faster, and into
 * files as small or smaller (the newest place of a key recurs sooner than an older one is worth
 * keeping): measured on the traces of a ucontext ping-pong, Boost.Fiber, skynet and pdns-recursor
 * (docs/performance.md). The slower levels keep zstd's own tables, sized for their searches. */
enum { FAST_LEVEL_MAX = 1, FAST_HASH_LOG = 11 };

static bool fast_level(int level)
{
	return level <= FAST_LEVEL_MAX && level != 0;
}

struct ctp_zwriter *ctp_zwriter_open_fd(int fd, const char *path, int level)
{
	struct ctp_zwriter *z = calloc(1, sizeof(*z));
	if (!z) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	z->fd = fd;
	z->path = strdup(path);
	z->cctx = ZSTD_createCCtx();
	ctp_jsonw_init(&z->text);
	/* A frame closes at the first line that takes it past CTP_ZWRITER_FRAME_BYTES. */
	ctp_jsonw_reserve(&z->text, CTP_ZWRITER_FRAME_BYTES + FRAME_SLACK);
	z->out_cap = ZSTD_compressBound(CTP_ZWRITER_FRAME_BYTES + FRAME_SLACK);
	z->out = malloc(z->out_cap);
	if (!z->path || !z->cctx || !z->out) {
		errno = ENOMEM;
		goto fail;
	}
	z->adaptive = level == CTP_ZWRITER_LEVEL_AUTO;
	z->level = z->adaptive ? CTP_ZWRITER_AUTO_LEVEL : level;
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, z->level);
	if (fast_level(z->level))
		ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_hashLog, FAST_HASH_LOG);
	/* A checksum per frame lets a reader tell a damaged frame from a good one. */
	ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1);
	return z;
fail:;
	int saved = errno;
	if (z->fd >= 0)
		close(z->fd);
	ZSTD_freeCCtx(z->cctx);
	free(z->path);
	ctp_jsonw_free(&z->text);
	free(z->out);
	free(z);
	errno = saved;
	return NULL;
}

static uint64_t count_lines(const char *p, size_t n)
{
	uint64_t lines = 0;
	const char *end = p + n;
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		lines++;
		p++;
	}
	return lines;
}

static void write_failed(struct ctp_zwriter *z, int err, const char *text, size_t n)
{
	if (!z->st.error) {
		z->st.error = err;
		fprintf(stderr,
			"%s: cannot write %s: %s; the trace keeps what was written "
			"before, "
			"later lines are lost until writing works again\n",
			program_invocation_short_name, z->path, strerror(err));
	}
	z->st.lost_lines += count_lines(text, n);
	/* Cut back a partial frame so the file stays a sequence of whole frames. */
	if (ftruncate(z->fd, (off_t)z->good_off) == 0)
		lseek(z->fd, (off_t)z->good_off, SEEK_SET);
}

/* Compresses `n` bytes of whole lines into one frame and appends it to the file. */
static void write_frame(struct ctp_zwriter *z, const char *text, size_t n)
{
	void *out = z->out;
	size_t cap = z->out_cap;
	void *big = NULL;
	if (ZSTD_compressBound(n) > cap) {
		cap = ZSTD_compressBound(n);
		out = big = malloc(cap);
		if (!out) {
			write_failed(z, ENOMEM, text, n);
			return;
		}
	}
	size_t zn = ZSTD_compress2(z->cctx, out, cap, text, n);
	if (ZSTD_isError(zn)) {
		fprintf(stderr, "%s: zstd: %s\n", program_invocation_short_name,
			ZSTD_getErrorName(zn));
		write_failed(z, EIO, text, n);
		free(big);
		return;
	}
	const char *p = out;
	size_t left = zn;
	while (left > 0) {
		ssize_t w = write(z->fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			write_failed(z, w < 0 ? errno : ENOSPC, text, n);
			free(big);
			return;
		}
		p += w;
		left -= (size_t)w;
	}
	z->good_off += zn;
	z->st.file_bytes += zn;
	z->st.frames++;
	free(big);
}

/* Level auto: the level for a frame of n bytes that began filling at z->frame_start_ns. */
static void choose_level(struct ctp_zwriter *z, size_t n)
{
	uint64_t took = ctp_monotonic_ns() - z->frame_start_ns;
	/* A small frame (the last, a snapshot's) is quick to compress at any level. */
	bool busy = n >= CTP_ZWRITER_FRAME_BYTES / 4 &&
		    (double)n * 1e9 >= (double)CTP_ZWRITER_BUSY_BYTES_PER_S * (double)took;
	if (busy)
		z->st.busy_frames++;
	int level = busy ? CTP_ZWRITER_BUSY_LEVEL : CTP_ZWRITER_AUTO_LEVEL;
	if (level != z->level &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)))
		z->level = level;
}

void ctp_zwriter_flush(struct ctp_zwriter *z)
{
	if (z->text.len == 0)
		return;
	if (z->adaptive)
		choose_level(z, z->text.len);
	write_frame(z, z->text.buf, z->text.len);
	ctp_jsonw_reset(&z->text);
}

struct ctp_jsonw *ctp_zwriter_text(struct ctp_zwriter *z)
{
	return &z->text;
}

void ctp_zwriter_lines_added(struct ctp_zwriter *z, size_t start, uint64_t lines)
{
	z->st.lines += lines;
	z->st.raw_bytes += z->text.len - start;
	if (start == 0)
		z->frame_start_ns = ctp_monotonic_ns();
	if (z->text.len >= CTP_ZWRITER_FRAME_BYTES)
		ctp_zwriter_flush(z);
}

void ctp_zwriter_write(struct ctp_zwriter *z, const void *data, size_t n)
{
	size_t start = z->text.len;
	ctp_jsonw_raw(&z->text, data, n);
	ctp_zwriter_lines_added(z, start, count_lines(data, n));
}

void ctp_zwriter_write_line(struct ctp_zwriter *z, const void *data, size_t n)
{
	size_t start = z->text.len;
	ctp_jsonw_raw(&z->text, data, n);
	ctp_zwriter_lines_added(z, start, 1);
}

void ctp_zwriter_tick(struct ctp_zwriter *z, uint64_t now_ns)
{
	if (z->text.len && now_ns - z->frame_start_ns >= CTP_ZWRITER_FRAME_NS)
		ctp_zwriter_flush(z);
}

void ctp_zwriter_stats(const struct ctp_zwriter *z, struct ctp_zwriter_stats *out)
{
	*out = z->st;
}

bool ctp_zwriter_close(struct ctp_zwriter *z, struct ctp_zwriter_stats *out)
{
	ctp_zwriter_flush(z);
	bool ok = z->st.error == 0;
	if (close(z->fd) != 0) {
		if (ok)
			fprintf(stderr, "%s: closing %s: %s\n", program_invocation_short_name,
				z->path, strerror(errno));
		ok = false;
	}
	if (out)
		*out = z->st;
	ZSTD_freeCCtx(z->cctx);
	free(z->path);
	ctp_jsonw_free(&z->text);
	free(z->out);
	free(z);
	return ok;
}

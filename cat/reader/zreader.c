#include "cat/reader/zreader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

struct ctp_zreader {
	int fd;
	ZSTD_DStream *dctx;
	void *inbuf;
	size_t inbuf_size;
	ZSTD_inBuffer in;
	uint64_t in_base;    /* input offset of inbuf[0] */
	uint64_t read_total; /* bytes read from fd */
	uint64_t frame_end;
	uint64_t frames;
	unsigned char head[4]; /* the first input bytes, to tell "not zstd" from "cut short" */
	size_t head_len;
	bool eof;
	/* The last decompress call left room in the output: zstd then holds nothing more that the
	 * input given so far can produce. */
	bool drained;
	bool done;
	enum ctp_zreader_status status;
	const char *message;
};

struct ctp_zreader *ctp_zreader_new(int fd)
{
	struct ctp_zreader *zr = calloc(1, sizeof(*zr));
	if (!zr)
		return NULL;
	zr->fd = fd;
	zr->dctx = ZSTD_createDStream();
	zr->inbuf_size = ZSTD_DStreamInSize();
	zr->inbuf = malloc(zr->inbuf_size);
	if (!zr->dctx || !zr->inbuf) {
		ctp_zreader_free(zr);
		return NULL;
	}
	zr->in.src = zr->inbuf;
	zr->message = "";
	return zr;
}

void ctp_zreader_free(struct ctp_zreader *zr)
{
	if (!zr)
		return;
	ZSTD_freeDStream(zr->dctx);
	free(zr->inbuf);
	free(zr);
}

/* Whether the first bytes could begin a zstd frame or a skippable frame (magic numbers from
 * RFC 8878, little-endian). Fewer than four bytes are judged on what there is. */
static bool head_is_zstd(const struct ctp_zreader *zr)
{
	static const unsigned char frame_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
	static const unsigned char skippable_magic[4] = {0x50, 0x2a, 0x4d, 0x18};
	if (memcmp(zr->head, frame_magic, zr->head_len) == 0)
		return true;
	if (zr->head_len >= 1 && (zr->head[0] & 0xf0) != skippable_magic[0])
		return false;
	return zr->head_len < 2 || memcmp(zr->head + 1, skippable_magic + 1, zr->head_len - 1) == 0;
}

static void stop(struct ctp_zreader *zr, enum ctp_zreader_status status, const char *message)
{
	zr->done = true;
	zr->status = status;
	zr->message = message;
}

/* Called when the input is used up and zstd has flushed all it can: classify the end. */
static void finish(struct ctp_zreader *zr)
{
	if (zr->read_total == 0)
		stop(zr, CTP_ZREADER_EMPTY, "empty input");
	else if (zr->frames == 0 && !head_is_zstd(zr))
		stop(zr, CTP_ZREADER_NOT_ZSTD, "not zstd-compressed");
	else if (zr->read_total > zr->frame_end)
		stop(zr, CTP_ZREADER_TRUNCATED, "input ended inside a zstd frame");
	else
		stop(zr, CTP_ZREADER_OK, "");
}

static bool refill(struct ctp_zreader *zr)
{
	zr->in_base += zr->in.size;
	zr->in.size = 0;
	zr->in.pos = 0;
	ssize_t n;
	do
		n = read(zr->fd, zr->inbuf, zr->inbuf_size);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		stop(zr, CTP_ZREADER_IO_ERROR, strerror(errno));
		return false;
	}
	if (n == 0) {
		zr->eof = true;
		return true;
	}
	while (zr->head_len < sizeof(zr->head) && zr->head_len < (size_t)n + zr->read_total) {
		zr->head[zr->head_len] =
			((unsigned char *)zr->inbuf)[zr->head_len - zr->read_total];
		zr->head_len++;
	}
	zr->in.size = (size_t)n;
	zr->read_total += (uint64_t)n;
	return true;
}

size_t ctp_zreader_read(struct ctp_zreader *zr, void *buf, size_t cap)
{
	ZSTD_outBuffer out = {buf, cap, 0};
	if (zr->done || cap == 0)
		return 0;
	for (;;) {
		if (zr->in.pos == zr->in.size && !zr->eof && !refill(zr))
			return out.pos;
		if (zr->in.pos == zr->in.size && zr->eof && zr->drained) {
			finish(zr);
			return out.pos;
		}
		size_t ret = ZSTD_decompressStream(zr->dctx, &out, &zr->in);
		if (ZSTD_isError(ret)) {
			bool first = zr->frames == 0 && !head_is_zstd(zr);
			stop(zr, first ? CTP_ZREADER_NOT_ZSTD : CTP_ZREADER_CORRUPT,
			     first ? "not zstd-compressed" : ZSTD_getErrorName(ret));
			return out.pos;
		}
		/* zstd stops consuming input at the end of each frame, so the input position is
		 * exactly where the frame ends. A frame is at least 9 bytes: never counted twice.
		 */
		uint64_t at = zr->in_base + zr->in.pos;
		if (ret == 0 && at > zr->frame_end) {
			zr->frame_end = at;
			zr->frames++;
		}
		zr->drained = out.pos < out.size;
		if (out.pos == out.size)
			return out.pos;
		/* Hand over what there is before blocking on a slow input (a pipe). */
		if (zr->in.pos == zr->in.size && !zr->eof && out.pos > 0)
			return out.pos;
	}
}

enum ctp_zreader_status ctp_zreader_status(const struct ctp_zreader *zr)
{
	return zr->status;
}

const char *ctp_zreader_message(const struct ctp_zreader *zr)
{
	return zr->message;
}

uint64_t ctp_zreader_input_bytes(const struct ctp_zreader *zr)
{
	return zr->read_total;
}

uint64_t ctp_zreader_frame_end(const struct ctp_zreader *zr)
{
	return zr->frame_end;
}

uint64_t ctp_zreader_frames(const struct ctp_zreader *zr)
{
	return zr->frames;
}

bool ctp_zreader_pending(const struct ctp_zreader *zr)
{
	return !zr->done && (zr->in.pos < zr->in.size || !zr->drained);
}

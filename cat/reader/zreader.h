/* Streaming reader of concatenated zstd frames, the container of a trace. It decompresses with a
 * fixed amount of memory whatever the input size, and keeps track of where each complete frame
 * ends in the compressed input, so that a reader can say how much of a cut-off trace is whole. */
#ifndef CTP_CAT_READER_ZREADER_H
#define CTP_CAT_READER_ZREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ctp_zreader;

/* How reading stands. While data flows it is CTP_ZREADER_OK; once ctp_zreader_read() has
 * returned 0 it says why the input ended. */
enum ctp_zreader_status {
	CTP_ZREADER_OK,	       /* reading; at the end: input ended on a frame boundary */
	CTP_ZREADER_EMPTY,     /* the input had no bytes at all */
	CTP_ZREADER_TRUNCATED, /* the input ended inside a frame */
	CTP_ZREADER_NOT_ZSTD,  /* the input does not start with a zstd frame */
	CTP_ZREADER_CORRUPT,   /* a frame after the first complete ones is damaged */
	CTP_ZREADER_IO_ERROR,  /* read() failed */
};

/* Reads the compressed stream from `fd` (not closed by the reader). NULL when out of memory. */
struct ctp_zreader *ctp_zreader_new(int fd);
void ctp_zreader_free(struct ctp_zreader *zr);

/* Decompresses up to `cap` bytes into `buf`. Returns how many (> 0), or 0 when nothing more
 * can be read: then ctp_zreader_status() says whether that is the clean end or why not.
 * Decompressed data of a frame cut short is returned up to its last complete block. */
size_t ctp_zreader_read(struct ctp_zreader *zr, void *buf, size_t cap);

enum ctp_zreader_status ctp_zreader_status(const struct ctp_zreader *zr);

/* Why reading stopped, in words (a zstd error name or strerror text); "" when it did not. */
const char *ctp_zreader_message(const struct ctp_zreader *zr);

/* Compressed bytes read from the input so far: at a cut, the size of what there was. */
uint64_t ctp_zreader_input_bytes(const struct ctp_zreader *zr);

/* Offset in the compressed input just past the last frame decoded completely (0 if none). */
uint64_t ctp_zreader_frame_end(const struct ctp_zreader *zr);

/* Whether the reader holds input it has not decompressed, or output zstd has not handed over
 * yet: the next read may return without reading the input. */
bool ctp_zreader_pending(const struct ctp_zreader *zr);

/* Frames decoded completely so far. */
uint64_t ctp_zreader_frames(const struct ctp_zreader *zr);

#endif

/* Writes a trace file as a sequence of independent zstd frames. Each frame holds whole lines;
 * it is closed at the line that takes it to 1 MiB of text or more, when a second has passed since
 * its first byte (ctp_zwriter_tick), and at the end. Every closed frame is complete on disk, so a
 * trace cut off by a crash or a full disk decompresses up to its last frame.
 *
 * A write error (a full disk) does not stop the writer: it is reported once on stderr, the
 * file is cut back to the end of its last complete frame (so that what is on disk stays
 * readable), the lost lines are counted, and later frames are tried again. */
#ifndef CTP_ZWRITER_H
#define CTP_ZWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTP_ZWRITER_FRAME_BYTES (1u << 20)
#define CTP_ZWRITER_FRAME_NS 1000000000ull

/* The level `auto`: each frame at CTP_ZWRITER_AUTO_LEVEL, or at CTP_ZWRITER_BUSY_LEVEL when its
 * text came faster than CTP_ZWRITER_BUSY_BYTES_PER_S. zstd at level 1 compresses the trace at
 * about 1.5 GB/s; at -3 about twice as fast, into files some 1.8 times as big. A busy program
 * (a million switches a second is 100 MB/s of text) then spends half as much of the collector's
 * CPU, which on a small machine is taken from the program; a quiet one keeps the small files. */
#define CTP_ZWRITER_LEVEL_AUTO (-1000)
#define CTP_ZWRITER_AUTO_LEVEL 1
#define CTP_ZWRITER_BUSY_LEVEL (-3)
#define CTP_ZWRITER_BUSY_BYTES_PER_S (4u << 20)

struct ctp_zwriter;

struct ctp_zwriter_stats {
	uint64_t raw_bytes;  /* text bytes handed to the writer */
	uint64_t lines;	     /* lines handed to the writer (written, pending or lost) */
	uint64_t file_bytes; /* compressed bytes on disk */
	uint64_t frames;
	uint64_t busy_frames; /* frames level auto compressed at CTP_ZWRITER_BUSY_LEVEL */
	uint64_t lost_lines;  /* lines in frames that could not be written (counted then) */
	int error;	      /* errno of the first write error, 0 = none */
};

/* Creates `path` as ctp_trace_file_create() does (ctp/trace_file.h: mode 0600, an earlier
 * trace kept as PATH.old, never through a symbolic link) and compresses at `level`. On failure
 * returns NULL with errno set. */
struct ctp_zwriter *ctp_zwriter_open(const char *path, int level);

/* Writes to `fd` (taken over: closed by ctp_zwriter_close), named `path` in messages. On
 * failure closes `fd` and returns NULL with errno set. */
struct ctp_zwriter *ctp_zwriter_open_fd(int fd, const char *path, int level);

/* Appends whole lines (the caller never splits a line between calls). */
void ctp_zwriter_write(struct ctp_zwriter *z, const void *data, size_t n);
/* The same for exactly one line (ending in its only newline): not scanned to be counted. */
void ctp_zwriter_write_line(struct ctp_zwriter *z, const void *data, size_t n);

/* Writing lines in place, without a copy: append to the text of the frame being built, then
 * say that `lines` whole lines were added since its length was `start`. Nothing else may touch
 * the writer in between: a frame holds whole lines only. */
struct ctp_jsonw *ctp_zwriter_text(struct ctp_zwriter *z);
void ctp_zwriter_lines_added(struct ctp_zwriter *z, size_t start, uint64_t lines);

/* Closes the current frame if its first byte is older than CTP_ZWRITER_FRAME_NS at `now_ns`
 * (CLOCK_MONOTONIC). Call it at least every few hundred milliseconds. */
void ctp_zwriter_tick(struct ctp_zwriter *z, uint64_t now_ns);

/* Closes the current frame now. */
void ctp_zwriter_flush(struct ctp_zwriter *z);

void ctp_zwriter_stats(const struct ctp_zwriter *z, struct ctp_zwriter_stats *out);

/* Flushes, closes the file and frees the writer. Returns false if anything could not be
 * written (the reason was already reported) or if closing failed. */
bool ctp_zwriter_close(struct ctp_zwriter *z, struct ctp_zwriter_stats *out);

#endif

#include "collector/block_window.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

struct ctp_header *ctp_header_map(int memfd, char *why, size_t why_len)
{
	size_t len = (size_t)round_up(sizeof(struct ctp_header), page_size());
	void *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (h == MAP_FAILED) {
		snprintf(why, why_len, "mmap of the segment's header: %s", strerror(errno));
		return NULL;
	}
	return h;
}

void ctp_header_unmap(struct ctp_header *h)
{
	if (h)
		munmap(h, (size_t)round_up(sizeof(*h), page_size()));
}

/* The file's size: it cannot shrink (F_SEAL_SHRINK, checked when the process connected), so
 * every byte below it stays readable for as long as a mapping of it is held. */
static uint64_t file_size(int memfd)
{
	struct stat st;
	return fstat(memfd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

static bool read_at(int memfd, void *buf, size_t len, uint64_t off)
{
	for (;;) {
		ssize_t n = pread(memfd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		return n == (ssize_t)len;
	}
}

uint64_t ctp_file_blocks(int memfd, uint64_t head, uint64_t stop, ctp_file_block_fn visit,
			 void *ctx)
{
	uint64_t size = file_size(memfd);
	uint64_t max_steps = size / sizeof(struct ctp_block);
	uint64_t n = 0;
	for (uint64_t off = head; off != 0 && off != stop && n < max_steps; n++) {
		struct ctp_block b;
		if (off % 8 != 0 || off > size || !read_at(memfd, &b, sizeof(b), off) ||
		    b.size < sizeof(b) || b.size > size - off)
			break;
		visit(ctx, b.kind, off);
		off = b.next;
	}
	return n;
}

void ctp_blocks_oldest_first(void *array, size_t from, size_t n, size_t size)
{
	uint8_t *a = array;
	for (size_t i = from, j = n; i + 1 < j; i++, j--)
		for (size_t k = 0; k < size; k++) {
			uint8_t t = a[i * size + k];
			a[i * size + k] = a[(j - 1) * size + k];
			a[(j - 1) * size + k] = t;
		}
}

/* Maps the block at off, its first `head` bytes alone when `head` is not 0: false when it is no
 * block inside the file (*retry false) or when the mapping failed (*retry true, the reason in
 * `why`). */
static bool map_block(int memfd, uint64_t off, uint64_t head, struct ctp_block_window *w,
		      bool *retry, char *why, size_t why_len)
{
	*retry = false;
	uint64_t size = file_size(memfd);
	struct ctp_block b;
	if (off % 8 != 0 || off > size || !read_at(memfd, &b, sizeof(b), off) ||
	    b.size < sizeof(b) || b.size > size - off)
		return false;
	uint64_t lo = off - off % page_size(), hi = off + (head && head < b.size ? head : b.size);
	void *base =
		mmap(NULL, (size_t)(hi - lo), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)lo);
	if (base == MAP_FAILED) {
		*retry = true;
		snprintf(why, why_len, "mmap of a block of %llu bytes: %s",
			 (unsigned long long)(hi - lo), strerror(errno));
		return false;
	}
	w->view = (struct ctp_segment_view){.base = base, .size = hi - lo, .origin = lo};
	return true;
}

void ctp_block_window_unmap(struct ctp_block_window *w)
{
	if (w->view.base)
		munmap(w->view.base, (size_t)w->view.size);
	w->view = (struct ctp_segment_view){0};
}

enum ctp_window_outcome ctp_block_window_open(int memfd, uint64_t off, struct ctp_block_window *w,
					      ctp_block_check_fn check, void *arg, uint32_t pid,
					      const char *what, bool *said)
{
	char why[160];
	bool retry;
	if (map_block(memfd, off, 0, w, &retry, why, sizeof(why))) {
		struct ctp_block *b = ctp_view_at(&w->view, off, sizeof(*b));
		if (b && (!check || check(&w->view, b, off, arg)))
			return CTP_WINDOW_MAPPED;
		ctp_block_window_unmap(w);
		return CTP_WINDOW_NEVER;
	}
	if (!retry)
		return CTP_WINDOW_NEVER;
	if (!*said) {
		*said = true;
		fprintf(stderr,
			"ctp-collector: pid %u: cannot map a new %s: %s; it is read once it can "
			"be\n",
			pid, what, why);
	}
	return CTP_WINDOW_LATER;
}

bool ctp_block_window_open_head(int memfd, uint64_t off, uint64_t bytes, struct ctp_block_window *w)
{
	char why[160];
	bool retry;
	return map_block(memfd, off, bytes, w, &retry, why, sizeof(why));
}

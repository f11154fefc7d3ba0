#include "collector/ring_window.h"

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

bool ctp_ring_window_map(int memfd, uint64_t off, struct ctp_ring_window *w,
			 struct ctp_ring_ref *ref, bool *retry, char *why, size_t why_len)
{
	*retry = false;
	uint64_t size = file_size(memfd);
	struct ctp_ring r;
	if (off > size || !read_at(memfd, &r, sizeof(r), off))
		return false;
	/* The window runs from the ring's header through its data, wherever the producer put the
	 * data (right after the header, by ctp/CTP.md, but a window trusts no offset). */
	uint64_t lo = off, hi = off + sizeof(r);
	if (r.data_off > size || r.capacity > size - r.data_off)
		return false;
	if (r.data_off < lo)
		lo = r.data_off;
	if (r.data_off + r.capacity > hi)
		hi = r.data_off + r.capacity;
	if (hi > size)
		return false;
	lo -= lo % page_size();
	void *base =
		mmap(NULL, (size_t)(hi - lo), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)lo);
	if (base == MAP_FAILED) {
		*retry = true;
		snprintf(why, why_len, "mmap of a ring of %llu bytes: %s",
			 (unsigned long long)(hi - lo), strerror(errno));
		return false;
	}
	w->view = (struct ctp_segment_view){.base = base, .size = hi - lo, .origin = lo};
	/* Checked again in the mapping: the process may have changed the ring since it was read. */
	struct ctp_block *b = ctp_view_at(&w->view, off, sizeof(struct ctp_ring));
	if (!b || !ctp_view_ring(&w->view, b, off, ref)) {
		ctp_ring_window_unmap(w);
		return false;
	}
	return true;
}

void ctp_ring_window_unmap(struct ctp_ring_window *w)
{
	if (w->view.base)
		munmap(w->view.base, (size_t)w->view.size);
	w->view = (struct ctp_segment_view){0};
}

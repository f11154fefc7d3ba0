#define _GNU_SOURCE /* O_TMPFILE */
#include "collector/ended_coros.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctp/xalloc.h"

struct ctp_ended_page {
	uint64_t number; /* id / CTP_ENDED_PAGE_IDS + 1; 0 = empty slot */
	uint64_t *bits;
};

void ctp_ended_coros_init(struct ctp_ended_coros *e)
{
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

void ctp_ended_coros_free(struct ctp_ended_coros *e)
{
	for (size_t i = 0; i < e->pages_cap; i++)
		free(e->pages[i].bits);
	free(e->pages);
	free(e->buf);
	if (e->fd >= 0)
		close(e->fd);
	ctp_ended_coros_init(e);
}

static size_t page_slot(uint64_t number, size_t cap)
{
	return (size_t)((number * 0x9E3779B97F4A7C15ull) >> 24) & (cap - 1);
}

static struct ctp_ended_page *find_page(const struct ctp_ended_coros *e, uint64_t number)
{
	if (!e->pages_cap)
		return NULL;
	for (size_t j = page_slot(number, e->pages_cap);; j = (j + 1) & (e->pages_cap - 1)) {
		if (e->pages[j].number == number)
			return &e->pages[j];
		if (!e->pages[j].number)
			return NULL;
	}
}

static struct ctp_ended_page *place_page(struct ctp_ended_page *pages, size_t cap, uint64_t number)
{
	size_t j = page_slot(number, cap);
	while (pages[j].number)
		j = (j + 1) & (cap - 1);
	return &pages[j];
}

static struct ctp_ended_page *page_for(struct ctp_ended_coros *e, uint64_t number)
{
	struct ctp_ended_page *p = find_page(e, number);
	if (p)
		return p;
	if ((e->npages + 1) * 2 > e->pages_cap) { /* load under a half */
		size_t cap = e->pages_cap ? 2 * e->pages_cap : 16;
		struct ctp_ended_page *pages = ctp_xcalloc(cap, sizeof(*pages));
		for (size_t i = 0; i < e->pages_cap; i++)
			if (e->pages[i].number)
				*place_page(pages, cap, e->pages[i].number) = e->pages[i];
		free(e->pages);
		e->pages = pages;
		e->pages_cap = cap;
	}
	p = place_page(e->pages, e->pages_cap, number);
	p->number = number;
	p->bits = ctp_xcalloc(CTP_ENDED_PAGE_IDS / 64, sizeof(uint64_t));
	e->npages++;
	return p;
}

bool ctp_ended_coros_has(const struct ctp_ended_coros *e, uint64_t id)
{
	const struct ctp_ended_page *p = find_page(e, id / CTP_ENDED_PAGE_IDS + 1);
	uint64_t bit = id % CTP_ENDED_PAGE_IDS;
	return p && (p->bits[bit / 64] >> (bit % 64) & 1);
}

/* Where the file goes: $TMPDIR, else /tmp. */
static const char *tmpdir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

/* An unlinked file of our own: gone with the collector, whatever way it ends. */
static int temporary_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR))
		return fd;
	/* A file system without O_TMPFILE. */
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/ctp-ended-XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Writes the buffer's block to the file; false (the log then stays in memory) when it cannot. */
static bool write_block(struct ctp_ended_coros *e)
{
	const char *dir = tmpdir();
	if (e->fd < 0)
		e->fd = temporary_file(dir);
	size_t bytes = e->nbuf * sizeof(*e->buf);
	ssize_t n = -1;
	if (e->fd >= 0) {
		n = pwrite(e->fd, e->buf, bytes, (off_t)(e->in_file * sizeof(*e->buf)));
		if (n >= 0 && (size_t)n < bytes)
			errno = ENOSPC;
	}
	if (n < 0 || (size_t)n < bytes) {
		fprintf(stderr,
			"ctp-collector: cannot keep the coroutines that ended in a temporary file "
			"in %s (%s): keeping them in memory, 24 bytes each\n",
			dir, strerror(errno));
		return false;
	}
	e->in_file += e->nbuf;
	e->nbuf = 0;
	return true;
}

void ctp_ended_coros_add(struct ctp_ended_coros *e, const struct ctp_ended_coro *c)
{
	struct ctp_ended_page *p = page_for(e, c->id / CTP_ENDED_PAGE_IDS + 1);
	uint64_t bit = c->id % CTP_ENDED_PAGE_IDS;
	p->bits[bit / 64] |= 1ull << (bit % 64);

	if (e->nbuf == CTP_ENDED_BLOCK && !e->memory_only && !write_block(e))
		e->memory_only = true;
	if (e->nbuf == e->buf_cap) {
		e->buf_cap = e->buf_cap ? 2 * e->buf_cap : 256;
		e->buf = ctp_xrealloc(e->buf, e->buf_cap * sizeof(*e->buf));
	}
	e->buf[e->nbuf++] = *c;
}

bool ctp_ended_coros_each(struct ctp_ended_coros *e,
			  void (*fn)(const struct ctp_ended_coro *c, void *ctx), void *ctx)
{
	bool whole = true;
	struct ctp_ended_coro block[1024];
	for (uint64_t done = 0; done < e->in_file;) {
		uint64_t want = e->in_file - done < 1024 ? e->in_file - done : 1024;
		ssize_t n = pread(e->fd, block, want * sizeof(block[0]),
				  (off_t)(done * sizeof(block[0])));
		if (n <= 0 || (size_t)n % sizeof(block[0])) {
			fprintf(stderr,
				"ctp-collector: cannot read back %llu of the coroutines that ended "
				"from their temporary file (%s): they get no state line\n",
				(unsigned long long)(e->in_file - done),
				n < 0 ? strerror(errno) : "it is shorter than written");
			whole = false;
			break;
		}
		for (size_t i = 0; i < (size_t)n / sizeof(block[0]); i++)
			fn(&block[i], ctx);
		done += (uint64_t)n / sizeof(block[0]);
	}
	for (size_t i = 0; i < e->nbuf; i++)
		fn(&e->buf[i], ctx);
	return whole;
}

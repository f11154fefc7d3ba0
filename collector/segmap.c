#include "collector/segmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "ctp/atomics.h"

bool ctp_segmap_map(int memfd, struct ctp_segment_view *v, bool *changed, char *why, size_t why_len)
{
	*changed = false;
	struct stat st;
	if (fstat(memfd, &st) != 0) {
		snprintf(why, why_len, "fstat: %s", strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct ctp_header)) {
		snprintf(why, why_len, "segment file of %lld bytes", (long long)st.st_size);
		return false;
	}
	if ((uint64_t)st.st_size == v->size)
		return true;
	/* The file cannot shrink (F_SEAL_SHRINK), so every byte of the mapping stays readable
	 * for as long as we hold it. */
	void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, why_len, "mmap of %lld bytes: %s", (long long)st.st_size,
			 strerror(errno));
		return false;
	}
	ctp_segmap_unmap(v);
	v->base = base;
	v->size = (uint64_t)st.st_size;
	*changed = true;
	return true;
}

void ctp_segmap_unmap(struct ctp_segment_view *v)
{
	if (v->base)
		munmap(v->base, v->size);
	v->base = NULL;
	v->size = 0;
}

void ctp_segmap_growth_init(struct ctp_segmap_growth *g, const struct ctp_segment_view *v)
{
	g->seen_segment_size = v->size;
	g->walked_head = 0;
	g->need_walk = true;
}

static const struct ctp_header *header(const struct ctp_segment_view *v)
{
	return (const struct ctp_header *)v->base;
}

bool ctp_segmap_follow(struct ctp_segmap_growth *g, int memfd, uint32_t pid,
		       struct ctp_segment_view *v)
{
	uint64_t size = CTP_LOAD_ACQUIRE(&header(v)->segment_size);
	if (size > v->size && size != g->seen_segment_size) {
		g->seen_segment_size = size;
		char why[160];
		bool changed;
		if (!ctp_segmap_map(memfd, v, &changed, why, sizeof(why)))
			fprintf(stderr,
				"ctp-collector: pid %u: cannot follow the segment's growth: %s\n",
				pid, why);
		else if (changed)
			g->need_walk = true;
	}
	if (!g->need_walk && CTP_LOAD_ACQUIRE(&header(v)->blocks_head) == g->walked_head)
		return false;
	g->walked_head = CTP_LOAD_ACQUIRE(&header(v)->blocks_head);
	g->need_walk = false;
	return true;
}

#include "collector/segmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctp/atomics.h"

/* Maps the grown part just after the mapping, where the address space is free: the view keeps
 * its base, and growing needs room for the new bytes alone, not for the old mapping and a whole
 * new one side by side (under an address-space limit, ulimit -v, that was the difference
 * between following a segment of 64 MiB and losing its new rings). */
static bool grow_in_place(int memfd, struct ctp_segment_view *v, uint64_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (!v->base || v->size % page != 0 || size <= v->size)
		return false;
	char *want = (char *)v->base + v->size;
	size_t more = (size_t)(size - v->size);
	void *got = mmap(want, more, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE,
			 memfd, (off_t)v->size);
	if (got == MAP_FAILED)
		return false;
	if (got != want) { /* a kernel before 4.17 takes the flag for a hint */
		munmap(got, more);
		return false;
	}
	v->size = size;
	return true;
}

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
	if (grow_in_place(memfd, v, (uint64_t)st.st_size)) {
		*changed = true;
		return true;
	}
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
	g->behind = false;
}

static const struct ctp_header *header(const struct ctp_segment_view *v)
{
	return (const struct ctp_header *)v->base;
}

bool ctp_segmap_follow(struct ctp_segmap_growth *g, int memfd, uint32_t pid,
		       struct ctp_segment_view *v)
{
	uint64_t size = CTP_LOAD_ACQUIRE(&header(v)->segment_size);
	if (size > v->size && (size != g->seen_segment_size || g->behind)) {
		bool news = size != g->seen_segment_size;
		g->seen_segment_size = size;
		char why[160];
		bool changed;
		if (ctp_segmap_map(memfd, v, &changed, why, sizeof(why))) {
			g->behind = false;
			g->need_walk |= changed;
		} else {
			g->behind = true;
			if (news)
				fprintf(stderr,
					"ctp-collector: pid %u: cannot follow the segment's "
					"growth: %s; its new rings and stations are read once it "
					"can be\n",
					pid, why);
		}
	}
	/* The newest blocks lie past the mapping, and the list is walked from the newest: a walk
	 * now would find none. What was found stays in use; the mapping is tried again at every
	 * look. */
	if (g->behind)
		return false;
	if (!g->need_walk && CTP_LOAD_ACQUIRE(&header(v)->blocks_head) == g->walked_head)
		return false;
	g->walked_head = CTP_LOAD_ACQUIRE(&header(v)->blocks_head);
	g->need_walk = false;
	return true;
}

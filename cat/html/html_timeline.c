/* The timeline of one thread as segments: which coroutine ran on it from when to when. A trace
 * of a million switches must still make a small page that a browser opens at once, so runs
 * shorter than a bucket are merged: each bucket of short runs becomes one segment, shown by the
 * coroutine that ran longest in it and marked with how many runs it holds. A thread's own
 * context (its scheduler, mostly) is shown only when no coroutine ran in the bucket: it runs
 * between every two coroutines, and would otherwise hide which of them ran. Runs as long as a
 * bucket or longer stay exact; at most two segments per bucket come out. */
#include <stdlib.h>

#include "cat/html/html.h"

/* Distinct coroutines whose time is counted in one bucket; further ones in the same bucket
 * only add to the run count (they cannot be the longest by much in so short a time). */
#define CANDIDATES 8

struct bucket {
	bool open;
	uint64_t index; /* which bucket of the grid */
	uint64_t start, end;
	uint64_t runs;
	size_t ncand;
	struct {
		int64_t coro;
		uint64_t ns;
	} cand[CANDIDATES];
};

struct segment_writer {
	struct ctp_jsonw *w;
	const bool *thread_ctx;
	const int32_t *page_of;
	uint64_t prev_start; /* starts are written relative to the previous one */
	bool first;
};

static void put_segment(struct segment_writer *sw, uint64_t start, uint64_t end, int64_t coro,
			uint64_t runs)
{
	if (!sw->first)
		CTP_JSONW_LIT(sw->w, ",");
	sw->first = false;
	ctp_jsonw_u64(sw->w, start - sw->prev_start);
	CTP_JSONW_LIT(sw->w, ",");
	ctp_jsonw_u64(sw->w, end - start);
	CTP_JSONW_LIT(sw->w, ",");
	ctp_jsonw_i64(sw->w, coro >= 0 ? sw->page_of[coro] : -1);
	CTP_JSONW_LIT(sw->w, ",");
	ctp_jsonw_u64(sw->w, runs);
	sw->prev_start = start;
}

static void flush_bucket(struct segment_writer *sw, struct bucket *b)
{
	if (!b->open)
		return;
	size_t best = 0;
	bool best_is_thread = true;
	for (size_t i = 0; i < b->ncand; i++) {
		int64_t c = b->cand[i].coro;
		bool is_thread = c >= 0 && sw->thread_ctx[c];
		if ((best_is_thread && !is_thread) ||
		    (best_is_thread == is_thread && b->cand[i].ns > b->cand[best].ns)) {
			best = i;
			best_is_thread = is_thread;
		}
	}
	put_segment(sw, b->start, b->end, b->cand[best].coro, b->runs);
	b->open = false;
}

static void bucket_add(struct bucket *b, uint64_t start, uint64_t end, int64_t coro)
{
	if (!b->open) {
		*b = (struct bucket){.open = true, .start = start};
	}
	b->end = end;
	b->runs++;
	for (size_t i = 0; i < b->ncand; i++)
		if (b->cand[i].coro == coro) {
			b->cand[i].ns += end - start;
			return;
		}
	if (b->ncand < CANDIDATES) {
		b->cand[b->ncand].coro = coro;
		b->cand[b->ncand].ns = end - start;
		b->ncand++;
	}
}

/* The analysis's index of a coroutine, -1 for none. */
static int64_t analysis_index(uint32_t coro)
{
	return coro == CTP_HTML_NONE ? -1 : (int64_t)coro;
}

void ctp_html_timeline_write(struct ctp_jsonw *w, const struct ctp_html_thread *th,
			     const bool *thread_ctx, const int32_t *page_of, uint64_t t0,
			     uint64_t bucket_ns, uint64_t first_from_ts, uint64_t end_ts)
{
	struct segment_writer sw = {.w = w,
				    .thread_ctx = thread_ctx,
				    .page_of = page_of,
				    .prev_start = t0,
				    .first = true};
	struct bucket b = {.open = false};
	if (th->n == 0)
		return;
	uint64_t start =
		first_from_ts && first_from_ts <= th->sw[0].ts ? first_from_ts : th->sw[0].ts;
	if (start < t0)
		start = t0;
	int64_t running = analysis_index(th->sw[0].from);
	for (size_t i = 0; i <= th->n; i++) {
		uint64_t end = i < th->n ? th->sw[i].ts : end_ts;
		if (end < start)
			end = start;
		if (end > start) {
			if (bucket_ns == 0 || end - start >= bucket_ns) {
				flush_bucket(&sw, &b);
				put_segment(&sw, start, end, running, 1);
			} else {
				uint64_t index = (start - t0) / bucket_ns;
				if (b.open && b.index != index)
					flush_bucket(&sw, &b);
				bucket_add(&b, start, end, running);
				b.index = index;
			}
		}
		if (i < th->n) {
			running = analysis_index(th->sw[i].to);
			start = end;
		}
	}
	flush_bucket(&sw, &b);
}

static int by_time(const void *pa, const void *pb)
{
	const struct ctp_html_switch *a = pa, *b = pb;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

void ctp_html_timeline_sort(struct ctp_html_thread *th)
{
	for (size_t i = 1; i < th->n; i++)
		if (th->sw[i].ts < th->sw[i - 1].ts) {
			/* qsort is not stable, but switches at the same nanosecond on one thread
			 * do not happen: each takes far longer than that. */
			qsort(th->sw, th->n, sizeof(*th->sw), by_time);
			return;
		}
}

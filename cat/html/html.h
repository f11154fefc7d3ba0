/* The dashboard (`ctp-cat --html`): one self-contained HTML page for one trace.
 *
 * The analysis (analysis.h) gives the model: processes, coroutines, stacks, findings. What the
 * page needs beyond it grows with the number of switches, so it is kept here instead:
 * html_collect.c records every switch per thread (for the timeline) and a bounded history per
 * coroutine; html_timeline.c downsamples the switches into segments; html_data.c writes all of
 * it as the page's JSON; out_html.c puts the JSON into the page template (html/dashboard.*,
 * turned into C data at build time by html/embed.cmake). */
#ifndef CTP_CAT_HTML_H
#define CTP_CAT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "cat/analysis/analysis.h"
#include "cat/model/idmap.h"
#include "ctp/jsonw.h"

/* The page template and what goes into it (generated html_assets.c). The template holds the
 * markers @CTP_STYLE@, @CTP_DATA@ and @CTP_SCRIPT@, once each, in this order. */
extern const char ctp_html_template[];
extern const char ctp_html_style[];
extern const char ctp_html_script[];

/* Per coroutine, the first HEAD and the last TAIL events are kept; the ones between are only
 * counted, so that a coroutine resumed a million times still makes a small page. */
#define CTP_HTML_HISTORY_HEAD 64
#define CTP_HTML_HISTORY_TAIL 192

#define CTP_HTML_NONE CTP_IDMAP_NONE

/* The page lists every coroutine but the ended ones past the first and the last
 * CTP_HTML_ENDED_ROWS / 2 of them to end, whose histories are not kept either: a server that makes
 * a coroutine per request makes millions, whose rows made a page of 211 MB for 10^6 that a browser
 * took a minute to open, and past about 2.5 M more than its strings can hold. Live coroutines,
 * threads and every coroutine a finding names are always listed; where the page refers to one it
 * does not list, it says CTP_HTML_NOT_LISTED. */
#define CTP_HTML_ENDED_ROWS 20000
#define CTP_HTML_NOT_LISTED (-2)

enum ctp_html_event_kind {
	CTP_HTML_EV_CREATED,
	CTP_HTML_EV_RESUMED,
	CTP_HTML_EV_SUSPENDED,
	CTP_HTML_EV_ENDED,
};

struct ctp_html_event {
	uint64_t ts;
	uint32_t tid;
	uint32_t stack; /* stack id within the process, 0 for none */
	uint32_t peer;	/* the analysis's index of the other coroutine, CTP_HTML_NONE if unknown */
	uint8_t kind;
};

/* A coroutine's kept history; ctp_html_collect.coros is indexed like the analysis's coroutines
 * (ctp_analysis_coro_at). */
struct ctp_html_coro {
	/* Up to CTP_HTML_HISTORY_HEAD, grown as events come: most coroutines of a trace with
	 * millions of them have a handful of events (made, resumed, suspended, ended), and a
	 * head allocated whole took 1.5 KB each, 1.5 GB over 10^6 coroutines. */
	struct ctp_html_event *head;
	struct ctp_html_event *tail; /* a ring of CTP_HTML_HISTORY_TAIL, allocated when needed */
	uint64_t after_head; /* events after the head: the last TAIL of them are in the ring */
	uint8_t nhead, cap_head;
	/* An ended coroutine past the first and the last CTP_HTML_ENDED_ROWS / 2 to end: the page
	 * lists it only when a finding names it, so its events are counted, not kept. */
	bool dropped;
};
_Static_assert(CTP_HTML_HISTORY_HEAD <= UINT8_MAX, "a head's count fits its byte");

struct ctp_html_switch {
	uint64_t ts;
	uint32_t from, to; /* the analysis's coroutine indexes */
};

struct ctp_html_thread {
	uint32_t process; /* the analysis's process index */
	uint32_t tid;
	struct ctp_html_switch *sw;
	size_t n, cap;
};

/* What the page needs that the analysis does not keep, collected while the run's analysis is fed
 * (the analysis stage feeds it each event first, so its processes and coroutines are known). */
struct ctp_html_collect {
	const struct ctp_analysis *a;
	struct ctp_html_coro *coros; /* by the analysis's coroutine index */
	size_t ncoros, cap_coros;
	struct ctp_html_thread *threads;
	size_t nthreads, cap_threads;
	uint64_t switches;
	struct ctp_idmap thread_index; /* (process index, tid) -> index in threads */
	/* Coroutines ended so far, and the last CTP_HTML_ENDED_ROWS / 2 of them past the first
	 * as many (a ring of the analysis's indexes): the ones whose history is kept. */
	uint64_t ended;
	uint32_t *recent_ended;
};

void ctp_html_collect_init(struct ctp_html_collect *c, const struct ctp_analysis *a);
/* Takes in one event; returns 0, or -1 when out of memory. */
int ctp_html_collect_event(struct ctp_html_collect *c, const struct ctp_event *ev);
void ctp_html_collect_free(struct ctp_html_collect *c);
/* Visits a coroutine's kept events in order; `omitted_at` gets the position where events were
 * left out and the return value how many (0: none; all of them for a dropped history). */
uint64_t ctp_html_history(const struct ctp_html_coro *co, struct ctp_html_event *out, size_t *n,
			  size_t *omitted_at);

/* Timeline segments of one thread, written as JSON numbers into `w`: per segment its start
 * (relative to the previous segment's start, the first relative to t0), its length, the
 * coroutine (its position in the page's list, page_of[the analysis's index]; -1 unknown) and
 * the number of runs merged into it (1: one exact run). Runs shorter than `bucket_ns` are merged
 * per bucket of that width and shown by the coroutine that ran longest in the bucket, threads'
 * own contexts (`thread_ctx`, by the analysis's index) only when nothing else ran; 0 keeps every
 * run. `end_ts` is where the last run ends; `first_from_ts` when the coroutine the first switch
 * leaves began to run (0: not known). */
void ctp_html_timeline_write(struct ctp_jsonw *w, const struct ctp_html_thread *th,
			     const bool *thread_ctx, const int32_t *page_of, uint64_t t0,
			     uint64_t bucket_ns, uint64_t first_from_ts, uint64_t end_ts);

/* Orders a thread's switches by time (they come in order per thread; this is a guard). */
void ctp_html_timeline_sort(struct ctp_html_thread *th);

/* Takes the next piece of the page's data; 0, or -1 with errno set. */
typedef int (*ctp_html_sink)(void *ctx, const char *buf, size_t len);

/* Writes the page's JSON data for the analysed trace, handed to `sink` a piece at a time (about
 * a MiB) as it is written. `source` names the trace file, `end` is how reading ended. Returns 0,
 * or -1 with errno set: ENOMEM, or the sink's error (nothing more was handed to it then). */
int ctp_html_data_write(const struct ctp_analysis *a, struct ctp_html_collect *c,
			const char *source, const struct ctp_trace_end *end, const char *trace_tool,
			ctp_html_sink sink, void *sink_ctx);

#endif

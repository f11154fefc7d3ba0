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

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/analysis.h"
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

#define CTP_HTML_NONE UINT32_MAX

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
	uint32_t peer;	/* the collector's index of the other coroutine, CTP_HTML_NONE if unknown */
	uint8_t kind;
};

struct ctp_html_coro {
	uint32_t record; /* process record (see ctp_html_collect.records) */
	uint64_t id;
	struct ctp_html_event *head; /* up to CTP_HTML_HISTORY_HEAD */
	struct ctp_html_event *tail; /* a ring of CTP_HTML_HISTORY_TAIL, allocated when needed */
	uint32_t nhead;
	uint64_t after_head; /* events after the head: the last TAIL of them are in the ring */
};

struct ctp_html_switch {
	uint64_t ts;
	uint32_t from, to; /* collector coroutine indexes */
};

struct ctp_html_thread {
	uint32_t record, tid;
	struct ctp_html_switch *sw;
	size_t n, cap;
};

/* (u64, u64) -> u32 (html_map.c). Values must not be CTP_HTML_NONE, which get returns for
 * a missing key. put returns 0, or -1 when out of memory. */
struct ctp_html_map;
struct ctp_html_map *ctp_html_map_new(void);
void ctp_html_map_free(struct ctp_html_map *m);
uint32_t ctp_html_map_get(const struct ctp_html_map *m, uint64_t a, uint64_t b);
int ctp_html_map_put(struct ctp_html_map *m, uint64_t a, uint64_t b, uint32_t value);

/* What the page needs that the analysis does not keep. A process record is one `process` line
 * (an exec makes a new one for the same pid), numbered in order, as the analysis numbers them. */
struct ctp_html_collect {
	uint32_t *record_pid; /* per record */
	size_t nrecords, cap_records;
	struct ctp_html_coro *coros;
	size_t ncoros, cap_coros;
	struct ctp_html_thread *threads;
	size_t nthreads, cap_threads;
	uint64_t switches;
	struct ctp_html_map *current_record; /* pid -> its latest record */
	struct ctp_html_map *coro_index;     /* (record, coro id) -> index in coros */
	struct ctp_html_map *thread_index;   /* (record, tid) -> index in threads */
};

int ctp_html_collect_init(struct ctp_html_collect *c);
/* Takes in one trace line; returns 0, or -1 when out of memory. */
int ctp_html_collect_line(struct ctp_html_collect *c, const json_t *line);
void ctp_html_collect_free(struct ctp_html_collect *c);
/* The collector's index of coroutine `id` of `record`, or CTP_HTML_NONE. */
uint32_t ctp_html_collect_find(const struct ctp_html_collect *c, uint32_t record, uint64_t id);
/* Visits a coroutine's kept events in order; `omitted_at` gets the position where events were
 * left out and the return value how many (0: none). */
uint64_t ctp_html_history(const struct ctp_html_coro *co, struct ctp_html_event *out, size_t *n,
			  size_t *omitted_at);

/* Timeline segments of one thread, written as JSON numbers into `w`: per segment its start
 * (relative to the previous segment's start, the first relative to t0), its length, the
 * coroutine (through `map`, the collector's index -> the page's, -1 unknown) and the number
 * of runs merged into it (1: one exact run). Runs shorter than `bucket_ns` are merged per
 * bucket of that width and shown by the coroutine that ran longest in the bucket, threads' own
 * contexts (`thread_ctx`, by page index) only when nothing else ran; 0 keeps every run. `end_ts` is
 * where the last run ends; `first_from_ts` when the coroutine the first switch leaves began to run
 * (0: not known). */
void ctp_html_timeline_write(struct ctp_jsonw *w, const struct ctp_html_thread *th,
			     const int64_t *map, const bool *thread_ctx, uint64_t t0,
			     uint64_t bucket_ns, uint64_t first_from_ts, uint64_t end_ts);

/* Orders a thread's switches by time (they come in order per thread; this is a guard). */
void ctp_html_timeline_sort(struct ctp_html_thread *th);

/* Writes the page's JSON data for the analysed trace. `source` names the trace file,
 * `end` is how reading ended. Returns 0, or -1 when out of memory. */
int ctp_html_data_write(struct ctp_jsonw *w, const struct ctp_analysis *a,
			struct ctp_html_collect *c, const char *source,
			const struct ctp_trace_end *end, const char *trace_tool);

#endif

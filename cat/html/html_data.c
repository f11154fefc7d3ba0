/* The dashboard's data: the analysis (summary, processes, coroutines, findings, stacks) and the
 * collected switches (timeline, histories) as one JSON object, in the layout dashboard.js reads
 * and docs/dashboard.md describes. Times are nanoseconds after t0, the earliest time in the
 * trace; -1 stands for unknown. Only the stacks something refers to are written. It goes out a
 * piece at a time, as it is written. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat/html/html.h"
#include "ctp/version.h"

/* Up to this many switches in all, every run is drawn as it was. */
#define RAW_SWITCHES 50000
/* Otherwise, the segments written (about two per bucket) stay under this many in all. */
#define BUCKET_BUDGET 65536
#define BUCKETS_MIN 256
#define BUCKETS_MAX 16384

/* The data is handed to the sink in pieces of about this size: a page is as big as its
 * coroutines (210 MB for 10^6 of them), and need not be held whole. */
#define PIECE_BYTES (1 << 20)

struct data {
	struct ctp_jsonw *w;
	ctp_html_sink sink;
	void *sink_ctx;
	int sink_errno; /* the sink failed with it (0: not) */
	const struct ctp_analysis *a;
	struct ctp_html_collect *c;
	uint64_t t0;
	bool *thread_ctx; /* the analysis's index -> a thread's own context */
	/* The analysis's index -> its position in the page's list, or CTP_HTML_NOT_LISTED. */
	int32_t *page_of;
	size_t unlisted;
	struct ctp_idmap stack_index; /* (process, stack id) -> position in `stacks` */
	const struct ctp_analysis_stack **stacks;
	size_t nstacks, cap_stacks;
	bool oom;
};

#define LIT(d, s) CTP_JSONW_LIT((d)->w, s)

/* Hands what was written to the sink once it is at least `at_least` bytes. After a failed
 * sink, the rest is dropped: the page is abandoned. */
static void drain(struct data *d, size_t at_least)
{
	if (d->w->len < at_least)
		return;
	if (!d->sink_errno && d->sink(d->sink_ctx, d->w->buf, d->w->len) < 0)
		d->sink_errno = errno ? errno : EIO;
	ctp_jsonw_reset(d->w);
}

static int64_t rel(const struct data *d, uint64_t ts)
{
	if (!ts)
		return -1;
	return ts > d->t0 ? (int64_t)(ts - d->t0) : 0;
}

/* The position of stack `id` of analysis process `process` in the page's stack table, added
 * when first referred to; -1 for none. */
static int64_t stack_ref(struct data *d, size_t process, uint32_t id)
{
	if (!id || process == SIZE_MAX)
		return -1;
	const struct ctp_analysis_stack *s = ctp_analysis_stack_in(d->a, process, id);
	if (!s)
		return -1;
	uint32_t k = ctp_idmap_get(&d->stack_index, process, id);
	if (k != CTP_IDMAP_NONE)
		return k;
	if (d->nstacks == d->cap_stacks) {
		size_t cap = d->cap_stacks ? d->cap_stacks * 2 : 64;
		const struct ctp_analysis_stack **p = realloc(d->stacks, cap * sizeof(*p));
		if (!p) {
			d->oom = true;
			return -1;
		}
		d->stacks = p;
		d->cap_stacks = cap;
	}
	if (ctp_idmap_put(&d->stack_index, process, id, (uint32_t)d->nstacks) < 0) {
		d->oom = true;
		return -1;
	}
	d->stacks[d->nstacks] = s;
	return (int64_t)d->nstacks++;
}

static int64_t page_coro(const struct data *d, size_t process, uint64_t id)
{
	if (!id || process == SIZE_MAX)
		return -1;
	const struct ctp_analysis_coro *co = ctp_analysis_coro_in(d->a, process, id);
	return co ? d->page_of[co->index] : -1;
}

static void key(struct data *d, const char *name)
{
	ctp_jsonw_str(d->w, name);
	LIT(d, ":");
}

static void bool_value(struct data *d, bool v)
{
	if (v)
		LIT(d, "true");
	else
		LIT(d, "false");
}

/* Marks coroutine `id` of process `process` as one a finding names. */
static void mark_named(struct data *d, bool *named, size_t process, uint64_t id)
{
	const struct ctp_analysis_coro *co = id ? ctp_analysis_coro_in(d->a, process, id) : NULL;
	if (co)
		named[co->index] = true;
}

/* Which coroutines are threads' own contexts (the timeline shows them only when nothing else
 * ran), and which the page lists (CTP_HTML_ENDED_ROWS): their positions in it. A coroutine a
 * finding names is listed even when its history was not kept. */
static int index_coros(struct data *d)
{
	size_t n = ctp_analysis_coro_count(d->a);
	d->thread_ctx = calloc(n + 1, sizeof(bool));
	d->page_of = malloc((n + 1) * sizeof(*d->page_of));
	bool *named = calloc(n + 1, sizeof(bool));
	if (!d->thread_ctx || !d->page_of || !named || n > INT32_MAX) {
		free(named);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ctp_analysis_coro *co = ctp_analysis_coro_at(d->a, i);
		d->thread_ctx[i] = co->kind && strcmp(co->kind, "thread") == 0;
	}
	for (size_t i = 0; i < ctp_analysis_finding_count(d->a); i++) {
		const struct ctp_finding *f = ctp_analysis_finding_at(d->a, i);
		mark_named(d, named, f->process, f->coro);
		mark_named(d, named, f->process, f->close_coro);
		for (size_t k = 0; k < f->count; k++)
			mark_named(d, named, f->process, f->coros[k]);
	}
	/* Of the ended ones, those whose history was kept: the first and the last half of
	 * CTP_HTML_ENDED_ROWS to end (html_collect.c), as a history keeps its first and last
	 * events. */
	size_t listed = 0;
	for (size_t i = 0; i < n; i++) {
		bool dropped = i < d->c->ncoros && d->c->coros[i].dropped;
		d->page_of[i] = !dropped || named[i] ? (int32_t)listed++ : CTP_HTML_NOT_LISTED;
	}
	d->unlisted = n - listed;
	free(named);
	return 0;
}

static void write_end(struct data *d, const struct ctp_trace_end *end)
{
	char note[512] = "";
	switch (end ? end->kind : CTP_TRACE_COMPLETE) {
	case CTP_TRACE_TRUNCATED:
		snprintf(note, sizeof(note),
			 "The trace was cut off at byte %" PRIu64
			 ": this page shows what was written before the cut.",
			 end->input_bytes);
		break;
	case CTP_TRACE_CORRUPT:
		snprintf(note, sizeof(note),
			 "The trace is damaged after byte %" PRIu64
			 " (%s): this page shows what came before.",
			 end->frame_end, end->why);
		break;
	case CTP_TRACE_TRAILING:
		snprintf(note, sizeof(note), "The trace is followed by more (%s): not shown.",
			 end->why);
		break;
	default:
		break;
	}
	uint64_t missing = end ? ctp_trace_end_missing(end) + ctp_trace_end_uncounted(end) : 0;
	if (missing) {
		size_t len = strlen(note);
		snprintf(note + len, sizeof(note) - len,
			 "%s%" PRIu64
			 " trace lines are missing: the collector could not write them "
			 "(a full disk?).",
			 len ? " " : "", missing);
	}
	if (end && end->bad_lines) {
		size_t len = strlen(note);
		snprintf(note + len, sizeof(note) - len, "%s%" PRIu64 " bad lines were skipped.",
			 len ? " " : "", end->bad_lines);
	}
	key(d, "end_note");
	ctp_jsonw_str(d->w, note[0] ? note : NULL);
}

static void write_summary(struct data *d)
{
	const struct ctp_analysis_summary *s = ctp_analysis_summary(d->a);
	LIT(d, ",\"summary\":{\"processes\":");
	ctp_jsonw_u64(d->w, s->processes);
	LIT(d, ",\"coroutines\":");
	ctp_jsonw_u64(d->w, s->coroutines);
	LIT(d, ",\"threads\":");
	ctp_jsonw_u64(d->w, s->threads);
	LIT(d, ",\"switches\":");
	ctp_jsonw_u64(d->w, s->switches);
	LIT(d, ",\"lost\":");
	ctp_jsonw_u64(d->w, s->lost);
	LIT(d, ",\"duration_ns\":");
	ctp_jsonw_u64(d->w, s->last_ts > s->first_ts ? s->last_ts - s->first_ts : 0);
	LIT(d, ",\"findings\":");
	ctp_jsonw_u64(d->w, ctp_analysis_finding_count(d->a));
	LIT(d, ",\"failures\":");
	ctp_jsonw_u64(d->w, ctp_analysis_failure_count(d->a));
	LIT(d, "},\"uncertain\":");
	bool_value(d, s->uncertain);
	LIT(d, ",\"complete\":");
	bool_value(d, s->complete);
}

static void write_processes(struct data *d)
{
	LIT(d, ",\"procs\":[");
	size_t np = ctp_analysis_process_count(d->a);
	for (size_t i = 0; i < np; i++) {
		const struct ctp_analysis_process *p = ctp_analysis_process_at(d->a, i);
		if (i)
			LIT(d, ",");
		LIT(d, "{\"pid\":");
		ctp_jsonw_u64(d->w, p->pid);
		LIT(d, ",\"ppid\":");
		ctp_jsonw_u64(d->w, p->ppid);
		LIT(d, ",\"exe\":");
		ctp_jsonw_str(d->w, p->exe);
		LIT(d, ",\"argv\":[");
		for (size_t k = 0; k < p->argc; k++) {
			if (k)
				LIT(d, ",");
			ctp_jsonw_str(d->w, p->argv[k]);
		}
		LIT(d, "],\"exit\":");
		char text[64];
		switch (p->exit) {
		case CTP_ANALYSIS_EXIT_NONE:
			ctp_jsonw_null(d->w);
			break;
		case CTP_ANALYSIS_EXIT_UNKNOWN:
			ctp_jsonw_str(d->w, "ended, status unknown");
			break;
		case CTP_ANALYSIS_EXIT_STATUS:
			snprintf(text, sizeof(text), "exit status %d", p->exit_value);
			ctp_jsonw_str(d->w, text);
			break;
		case CTP_ANALYSIS_EXIT_SIGNAL:
			snprintf(text, sizeof(text), "killed by signal %d", p->exit_value);
			ctp_jsonw_str(d->w, text);
			break;
		case CTP_ANALYSIS_EXIT_SNAPSHOT:
			ctp_jsonw_str(d->w, "running (live snapshot)");
			break;
		}
		LIT(d, ",\"coroutines\":");
		ctp_jsonw_u64(d->w, p->coroutines);
		LIT(d, ",\"switches\":");
		ctp_jsonw_u64(d->w, p->switches);
		LIT(d, ",\"lost\":");
		ctp_jsonw_u64(d->w, p->lost);
		LIT(d, "}");
	}
	LIT(d, "]");
}

static void write_history(struct data *d, const struct ctp_analysis_coro *co,
			  struct ctp_html_event *buf)
{
	size_t n = 0, omitted_at = 0;
	uint64_t omitted = 0;
	if (co->index < d->c->ncoros)
		omitted = ctp_html_history(&d->c->coros[co->index], buf, &n, &omitted_at);
	LIT(d, "[");
	for (size_t i = 0; i < n; i++) {
		const struct ctp_html_event *ev = &buf[i];
		if (i)
			LIT(d, ",");
		ctp_jsonw_i64(d->w, rel(d, ev->ts));
		LIT(d, ",");
		ctp_jsonw_u64(d->w, ev->kind);
		LIT(d, ",");
		ctp_jsonw_u64(d->w, ev->tid);
		LIT(d, ",");
		ctp_jsonw_i64(d->w, stack_ref(d, co->process, ev->stack));
		LIT(d, ",");
		ctp_jsonw_i64(d->w, ev->peer == CTP_HTML_NONE ? -1 : d->page_of[ev->peer]);
	}
	LIT(d, "],");
	ctp_jsonw_u64(d->w, omitted_at);
	LIT(d, ",");
	ctp_jsonw_u64(d->w, omitted);
}

/* One array per coroutine; dashboard.js names the positions (C_PID ...). */
static void write_coros(struct data *d)
{
	static struct ctp_html_event buf[CTP_HTML_HISTORY_HEAD + CTP_HTML_HISTORY_TAIL];
	LIT(d, ",\"ended_rows\":");
	ctp_jsonw_u64(d->w, CTP_HTML_ENDED_ROWS);
	LIT(d, ",\"coros_unlisted\":");
	ctp_jsonw_u64(d->w, d->unlisted);
	LIT(d, ",\"coros\":[");
	size_t n = ctp_analysis_coro_count(d->a);
	for (size_t i = 0; i < n; i++) {
		const struct ctp_analysis_coro *co = ctp_analysis_coro_at(d->a, i);
		if (d->page_of[i] == CTP_HTML_NOT_LISTED)
			continue;
		if (d->page_of[i])
			LIT(d, ",");
		LIT(d, "[");
		ctp_jsonw_u64(d->w, co->pid);
		LIT(d, ",");
		ctp_jsonw_u64(d->w, co->id);
		LIT(d, ",");
		ctp_jsonw_str(d->w, co->kind);
		LIT(d, ",");
		ctp_jsonw_str(d->w, co->entry);
		LIT(d, ",");
		ctp_jsonw_i64(d->w, page_coro(d, co->process, co->parent));
		LIT(d, ",");
		ctp_jsonw_u64(d->w, co->tid);
		LIT(d, ",");
		ctp_jsonw_i64(d->w, rel(d, co->created_ts));
		LIT(d, ",");
		ctp_jsonw_i64(d->w, stack_ref(d, co->process, co->create_stack));
		LIT(d, ",");
		/* An idle coroutine is suspended, but waits in its runtime's pool as meant. */
		ctp_jsonw_str(d->w, co->idle ? "idle"
				    : co->state == CTP_ANALYSIS_STATE_UNKNOWN
					    ? NULL
					    : ctp_analysis_state_name(co->state));
		LIT(d, ",");
		ctp_jsonw_i64(d->w, rel(d, co->state_since ? co->state_since
					   : co->last_resume_ts > co->last_suspend_ts
						   ? co->last_resume_ts
						   : co->last_suspend_ts));
		LIT(d, ",");
		ctp_jsonw_i64(d->w, stack_ref(d, co->process, co->state_stack));
		LIT(d, ",");
		ctp_jsonw_u64(d->w, co->resumes);
		LIT(d, ",");
		ctp_jsonw_i64(d->w, co->ended ? rel(d, co->ended_ts) : -1);
		LIT(d, ",");
		ctp_jsonw_i64(d->w, co->wait_fd);
		LIT(d, ",");
		ctp_jsonw_str(d->w, co->wait_op);
		LIT(d, ",");
		write_history(d, co, buf);
		LIT(d, "]");
		drain(d, PIECE_BYTES);
	}
	LIT(d, "]");
}

static uint64_t bucket_width(const struct data *d)
{
	const struct ctp_analysis_summary *s = ctp_analysis_summary(d->a);
	if (d->c->switches <= RAW_SWITCHES || d->c->nthreads == 0 || s->last_ts <= s->first_ts)
		return 0;
	size_t buckets = BUCKET_BUDGET / d->c->nthreads;
	if (buckets < BUCKETS_MIN)
		buckets = BUCKETS_MIN;
	if (buckets > BUCKETS_MAX)
		buckets = BUCKETS_MAX;
	uint64_t w = (s->last_ts - s->first_ts) / buckets;
	return w ? w : 1;
}

static void write_threads(struct data *d)
{
	uint64_t bucket_ns = bucket_width(d);
	LIT(d, ",\"bucket_ns\":");
	ctp_jsonw_u64(d->w, bucket_ns);
	LIT(d, ",\"threads\":[");
	for (size_t i = 0; i < d->c->nthreads; i++) {
		struct ctp_html_thread *th = &d->c->threads[i];
		ctp_html_timeline_sort(th);
		/* Its process: where the last run ends; and when the thread's own context (the
		 * first switch leaves it) began. */
		const struct ctp_analysis_process *p = ctp_analysis_process_at(d->a, th->process);
		uint64_t end_ts = p ? p->last_ts : th->sw[th->n - 1].ts;
		uint64_t first_from_ts = 0;
		int64_t first = th->sw[0].from == CTP_HTML_NONE ? -1 : (int64_t)th->sw[0].from;
		if (first >= 0) {
			const struct ctp_analysis_coro *co = ctp_analysis_coro_at(d->a, first);
			if (d->thread_ctx[first])
				first_from_ts = co->created_ts;
		}
		if (i)
			LIT(d, ",");
		LIT(d, "{\"pid\":");
		ctp_jsonw_u64(d->w, p ? p->pid : 0);
		LIT(d, ",\"tid\":");
		ctp_jsonw_u64(d->w, th->tid);
		LIT(d, ",\"segs\":[");
		ctp_html_timeline_write(d->w, th, d->thread_ctx, d->page_of, d->t0, bucket_ns,
					first_from_ts, end_ts);
		LIT(d, "]}");
		drain(d, PIECE_BYTES);
	}
	LIT(d, "]");
}

static void write_members(struct data *d, const struct ctp_finding *f)
{
	LIT(d, ",\"members\":[");
	for (size_t k = 0; k < f->count; k++) {
		if (k)
			LIT(d, ",");
		ctp_jsonw_i64(d->w, page_coro(d, f->process, f->coros[k]));
	}
	LIT(d, "],\"fds\":[");
	for (size_t k = 0; f->fds && k < f->count; k++) {
		if (k)
			LIT(d, ",");
		ctp_jsonw_i64(d->w, f->fds[k]);
	}
	LIT(d, "]");
}

static void write_finding(struct data *d, const struct ctp_finding *f)
{
	LIT(d, "{\"kind\":");
	ctp_jsonw_str(d->w, ctp_finding_kind_name(f->kind));
	LIT(d, ",\"failure\":");
	bool_value(d, ctp_finding_kind_is_failure(f->kind));
	LIT(d, ",\"pid\":");
	ctp_jsonw_u64(d->w, f->pid);
	LIT(d, ",\"coro\":");
	ctp_jsonw_i64(d->w, page_coro(d, f->process, f->coro));
	LIT(d, ",\"fd\":");
	ctp_jsonw_i64(d->w, f->fd);
	LIT(d, ",\"op\":");
	ctp_jsonw_str(d->w, f->op);
	LIT(d, ",\"stack\":");
	ctp_jsonw_i64(d->w, stack_ref(d, f->process, f->stack));
	LIT(d, ",\"ts\":");
	ctp_jsonw_i64(d->w, rel(d, f->ts));
	LIT(d, ",\"dur\":");
	ctp_jsonw_u64(d->w, f->duration_ns);
	LIT(d, ",\"at_end\":");
	bool_value(d, f->at_end);
	LIT(d, ",\"close\":");
	if (f->kind == CTP_FINDING_LOST_WAKEUP && (f->close_ts || f->close_coro || f->close_tid)) {
		LIT(d, "{\"ts\":");
		ctp_jsonw_i64(d->w, rel(d, f->close_ts));
		LIT(d, ",\"coro\":");
		ctp_jsonw_i64(d->w, page_coro(d, f->process, f->close_coro));
		LIT(d, ",\"tid\":");
		ctp_jsonw_u64(d->w, f->close_tid);
		LIT(d, ",\"stack\":");
		ctp_jsonw_i64(d->w, stack_ref(d, f->process, f->close_stack));
		LIT(d, "}");
	} else {
		ctp_jsonw_null(d->w);
	}
	LIT(d, ",\"signal\":");
	ctp_jsonw_i64(d->w, f->signal);
	LIT(d, ",\"tid\":");
	ctp_jsonw_u64(d->w, f->tid);
	LIT(d, ",\"addr\":");
	if (f->addr)
		ctp_jsonw_hex(d->w, f->addr);
	else
		ctp_jsonw_null(d->w);
	write_members(d, f);
	LIT(d, ",\"uncertain\":");
	bool_value(d, f->uncertain);
	LIT(d, "}");
}

/* >>> The findings section of the page is fed here, from the analysis model (analysis.h). */
static void write_findings(struct data *d)
{
	LIT(d, ",\"findings_available\":true,\"findings\":[");
	size_t n = ctp_analysis_finding_count(d->a);
	for (size_t i = 0; i < n; i++) {
		if (i)
			LIT(d, ",");
		write_finding(d, ctp_analysis_finding_at(d->a, i));
		drain(d, PIECE_BYTES);
	}
	LIT(d, "]");
}

/* Last: by now every stack that something refers to has its place. */
static void write_stacks(struct data *d)
{
	LIT(d, ",\"stacks\":[");
	for (size_t i = 0; i < d->nstacks; i++) {
		const struct ctp_analysis_stack *s = d->stacks[i];
		if (i)
			LIT(d, ",");
		LIT(d, "[");
		for (size_t k = 0; k < s->nframes; k++) {
			const struct ctp_analysis_frame *f = &s->frames[k];
			if (k)
				LIT(d, ",");
			LIT(d, "[");
			ctp_jsonw_str(d->w, f->sym);
			LIT(d, ",");
			ctp_jsonw_u64(d->w, f->off);
			LIT(d, ",");
			ctp_jsonw_str(d->w, f->file);
			LIT(d, ",");
			ctp_jsonw_i64(d->w, f->line);
			LIT(d, ",");
			ctp_jsonw_str(d->w, f->module);
			LIT(d, ",");
			ctp_jsonw_hex(d->w, f->addr);
			if (f->has_module_off) {
				LIT(d, ",");
				ctp_jsonw_hex(d->w, f->module_off);
			}
			LIT(d, "]");
		}
		LIT(d, "]");
		drain(d, PIECE_BYTES);
	}
	LIT(d, "]");
}

int ctp_html_data_write(const struct ctp_analysis *a, struct ctp_html_collect *c,
			const char *source, const struct ctp_trace_end *end, const char *trace_tool,
			ctp_html_sink sink, void *sink_ctx)
{
	const struct ctp_analysis_summary *s = ctp_analysis_summary(a);
	struct ctp_jsonw w;
	ctp_jsonw_init(&w);
	struct data d = {
		.w = &w, .sink = sink, .sink_ctx = sink_ctx, .a = a, .c = c, .t0 = s->first_ts};
	int rc = -1;
	errno = ENOMEM;
	if (index_coros(&d) < 0)
		goto out;

	char tool[64];
	snprintf(tool, sizeof(tool), "ctp-cat %s", ctp_version_string());
	LIT(&d, "{\"format\":\"ctp-dashboard\",\"version\":1,\"source\":");
	ctp_jsonw_str(&w, source);
	LIT(&d, ",\"tool\":");
	ctp_jsonw_str(&w, tool);
	LIT(&d, ",\"trace_tool\":");
	ctp_jsonw_str(&w, trace_tool);
	LIT(&d, ",");
	write_end(&d, end);
	write_summary(&d);
	LIT(&d, ",\"t0\":");
	ctp_jsonw_u64(&w, d.t0);
	LIT(&d, ",\"t1\":");
	ctp_jsonw_u64(&w, s->last_ts > s->first_ts ? s->last_ts - s->first_ts : 0);
	write_processes(&d);
	write_coros(&d);
	write_threads(&d);
	write_findings(&d);
	write_stacks(&d);
	LIT(&d, "}");
	drain(&d, 0);
	rc = d.oom || d.sink_errno ? -1 : 0;
	errno = d.oom ? ENOMEM : d.sink_errno;
out:
	ctp_jsonw_free(&w);
	free(d.thread_ctx);
	free(d.page_of);
	free(d.stacks);
	ctp_idmap_free(&d.stack_index);
	return rc;
}

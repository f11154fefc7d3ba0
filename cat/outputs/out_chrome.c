/* Chrome Trace Event JSON, for ui.perfetto.dev and chrome://tracing.
 *
 * Layout: a process per traced process; in it one track (a pseudo-thread, tid CORO_TID_BASE +
 * coroutine id, named "entry#id") per coroutine, holding its runs as complete `X` slices, and
 * the real threads' tracks holding the same runs, so one shows what a coroutine did and the
 * other what a thread ran. A flow arrow (`s` -> `f`) goes from the run that switched away to the
 * run it resumed. The report's findings (cat/analysis/analysis.h: crash, lost_wakeup,
 * missed_readiness, stuck, never_yielded, leak) become instant events, cat "finding", at the end of
 * the file.
 *
 * Streaming: a run is known once the next switch on its thread closes it. Switches of one
 * thread arrive in order (one ring per thread), so the only state kept is, per thread, which
 * coroutine it runs since when: memory follows the live threads and coroutines, and the order of
 * lines between threads does not matter (the viewer sorts events by time). Runs still open at a
 * process's exit or at the trace's end have no end: they become `B` events without `E`, which
 * the viewers show as "did not end".
 *
 * Perfetto's rules this keeps (docs/ctp-cat.md): ts and dur in microseconds, written to the
 * nanosecond as fixed three-decimal fractions; every X has a dur >= 0; slices of one track
 * never overlap (a thread runs one coroutine at a time, and a coroutine on one thread at a
 * time); flows carry an id, their `f` binds to the enclosing slice (bp "e"); only thread_name
 * and process_name metadata. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/analysis/analysis.h"
#include "cat/cat.h"
#include "cat/model/runs.h"
#include "cat/model/names.h"
#include "cat/outputs/view.h"
#include "ctp/jsonw.h"

/* Pseudo-thread ids of coroutine tracks: above any Linux tid (pid_max is at most 2^22). */
#define CORO_TID_BASE (1ull << 30)
#define NAME_SIZE 256

struct out_chrome {
	struct ctp_cat_view v;
	struct ctp_jsonw w;
	uint64_t start;
	bool any_event;
	struct ctp_runs runs; /* what each thread runs (cat/model/runs.h) */
	uint64_t next_flow;
	bool failed; /* writing an open run failed while a process ended */
	/* The report's findings (cat/analysis/analysis.h), drawn once the trace is read and written
	 * as instant events at the end; the run's analysis stage feeds it. */
	const struct ctp_analysis *analysis;
};

/* ---- event writing ---- */

static void begin_event(struct out_chrome *o, const char *ph, uint32_t pid, uint64_t tid)
{
	struct ctp_jsonw *w = &o->w;
	ctp_jsonw_reset(w);
	if (o->any_event)
		CTP_JSONW_LIT(w, ",\n");
	o->any_event = true;
	CTP_JSONW_LIT(w, "{\"ph\":");
	ctp_jsonw_str(w, ph);
	CTP_JSONW_LIT(w, ",\"pid\":");
	ctp_jsonw_u64(w, pid);
	CTP_JSONW_LIT(w, ",\"tid\":");
	ctp_jsonw_u64(w, tid);
}

/* A duration or time in microseconds with exactly three decimals: nanoseconds, no rounding. */
static void put_us(struct ctp_jsonw *w, uint64_t ns)
{
	char digits[4] = {(char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			  (char)('0' + ns % 10), 0};
	ctp_jsonw_u64(w, ns / 1000);
	CTP_JSONW_LIT(w, ".");
	ctp_jsonw_raw(w, digits, 3);
}

static void put_ts(struct out_chrome *o, uint64_t ts)
{
	struct ctp_jsonw *w = &o->w;
	CTP_JSONW_LIT(w, ",\"ts\":");
	if (ts < o->start) {
		CTP_JSONW_LIT(w, "-");
		put_us(w, o->start - ts);
	} else {
		put_us(w, ts - o->start);
	}
}

static int end_event(struct out_chrome *o)
{
	CTP_JSONW_LIT(&o->w, "}");
	return fwrite_unlocked(o->w.buf, 1, o->w.len, o->v.f) == o->w.len ? 0 : -1;
}

static int put_metadata(struct out_chrome *o, const char *what, uint32_t pid, uint64_t tid,
			const char *name)
{
	begin_event(o, "M", pid, tid);
	CTP_JSONW_LIT(&o->w, ",\"name\":");
	ctp_jsonw_str(&o->w, what);
	CTP_JSONW_LIT(&o->w, ",\"args\":{\"name\":");
	ctp_jsonw_str(&o->w, name);
	CTP_JSONW_LIT(&o->w, "}");
	return end_event(o);
}

/* The run of `r` that ends at `end` (or is still open, end == 0) on both its tracks. */
static int put_run(struct out_chrome *o, const struct ctp_run *r, uint64_t end)
{
	char name[NAME_SIZE];
	ctp_cat_names_coro(o->v.names, r->pid, r->coro, name, sizeof(name));
	const uint64_t tracks[2] = {r->tid, CORO_TID_BASE + r->coro};
	for (int i = 0; i < 2; i++) {
		struct ctp_jsonw *w = &o->w;
		begin_event(o, end ? "X" : "B", r->pid, tracks[i]);
		put_ts(o, r->start);
		if (end) {
			/* One nanosecond short of the next run: a reader that turns microseconds
			 * into nanoseconds through a double and truncates could otherwise make two
			 * runs that touch overlap by a nanosecond. */
			uint64_t dur = end >= r->start ? end - r->start : 0;
			CTP_JSONW_LIT(w, ",\"dur\":");
			put_us(w, dur > 1 ? dur - 1 : dur);
		}
		CTP_JSONW_LIT(w, ",\"name\":");
		ctp_jsonw_str(w, name);
		CTP_JSONW_LIT(w, ",\"cat\":\"run\",\"args\":{\"coro\":");
		ctp_jsonw_u64(w, r->coro);
		CTP_JSONW_LIT(w, ",\"tid\":");
		ctp_jsonw_u64(w, r->tid);
		if (r->initial) {
			CTP_JSONW_LIT(w, ",\"how\":\"start\"");
		} else {
			CTP_JSONW_LIT(w, ",\"how\":");
			ctp_jsonw_str(w, r->how ? r->how : "?");
			CTP_JSONW_LIT(w, ",\"resumed_by\":");
			ctp_jsonw_u64(w, r->by);
		}
		if (!end)
			CTP_JSONW_LIT(w, ",\"still_running\":true");
		CTP_JSONW_LIT(w, "}");
		if (end_event(o) < 0)
			return -1;
	}
	return 0;
}

/* An arrow from the run of `from` that ends at `at` (begun at `from_start`) to the run of `to`
 * that begins at `at`. The start sits in the middle of the closing run, so that it binds to that
 * run whatever rounding a reader applies, not to whatever comes next on the track. */
static int put_flow(struct out_chrome *o, uint32_t pid, uint64_t from, uint64_t from_start,
		    uint64_t to, uint64_t at)
{
	uint64_t id = ++o->next_flow;
	begin_event(o, "s", pid, CORO_TID_BASE + from);
	put_ts(o, from_start + (at - from_start) / 2);
	CTP_JSONW_LIT(&o->w, ",\"id\":");
	ctp_jsonw_u64(&o->w, id);
	CTP_JSONW_LIT(&o->w, ",\"name\":\"resume\",\"cat\":\"resume\"");
	if (end_event(o) < 0)
		return -1;
	begin_event(o, "f", pid, CORO_TID_BASE + to);
	put_ts(o, at);
	CTP_JSONW_LIT(&o->w, ",\"id\":");
	ctp_jsonw_u64(&o->w, id);
	CTP_JSONW_LIT(&o->w, ",\"bp\":\"e\",\"name\":\"resume\",\"cat\":\"resume\"");
	return end_event(o);
}

static int put_instant(struct out_chrome *o, uint32_t pid, uint64_t tid, uint64_t ts,
		       const char *name, const char *args)
{
	begin_event(o, "i", pid, tid);
	put_ts(o, ts);
	CTP_JSONW_LIT(&o->w, ",\"s\":\"t\",\"name\":");
	ctp_jsonw_str(&o->w, name);
	if (args) {
		CTP_JSONW_LIT(&o->w, ",\"args\":");
		ctp_jsonw_raw(&o->w, args, strlen(args));
	}
	return end_event(o);
}

/* ---- lines ---- */

static void close_run(void *ctx, const struct ctp_run *r)
{
	struct out_chrome *o = ctx;
	if (r->open && put_run(o, r, 0) < 0)
		o->failed = true;
}

/* Ends a process's threads: runs still open did not end within the trace. */
static int close_process(struct out_chrome *o, uint32_t pid)
{
	ctp_runs_end_process(&o->runs, pid, close_run, o);
	return o->failed ? -1 : 0;
}

static int on_switch(struct out_chrome *o, const struct ctp_event *ev)
{
	if (!ev->pid || !ev->tid || !ev->ts || !ev->sw.from || !ev->sw.to)
		return 0;
	const struct ctp_cat_coro_name *from =
		ctp_cat_names_coro_info(o->v.names, ev->pid, ev->sw.from);
	struct ctp_run_step step;
	if (ctp_runs_switch(&o->runs, ev, from ? from->created_ts : 0, from ? from->created_tid : 0,
			    &step) < 0)
		return -1;
	if (step.new_thread) {
		char name[48];
		snprintf(name, sizeof(name), "thread %" PRIu32, ev->tid);
		if (put_metadata(o, "thread_name", ev->pid, ev->tid, name) < 0)
			return -1;
	}
	const struct ctp_run *ended = &step.ended;
	if (ended->open && put_run(o, ended, ev->ts) < 0)
		return -1;
	if (ended->open && ended->coro == ev->sw.from &&
	    put_flow(o, ev->pid, ev->sw.from, ended->start, ev->sw.to, ev->ts) < 0)
		return -1;
	return 0;
}

static int on_loss(struct out_chrome *o, const struct ctp_event *ev)
{
	if (!ev->pid || !ev->tid)
		return 0;
	bool made;
	struct ctp_run *r = ctp_runs_thread(&o->runs, ev->pid, ev->tid, &made);
	if (!r)
		return -1;
	char args[48];
	snprintf(args, sizeof(args), "{\"count\":%" PRIu64 "}", ev->loss.count);
	return put_instant(o, ev->pid, ev->tid, r->last_ts ? r->last_ts : o->start, "events lost",
			   args);
}

static int on_process(struct out_chrome *o, const struct ctp_event *ev)
{
	if (!ev->pid)
		return 0;
	/* An exec: the old image's runs end here. */
	if (close_process(o, ev->pid) < 0)
		return -1;
	const char *exe = ev->process.exe;
	const char *base = exe ? strrchr(exe, '/') : NULL;
	return put_metadata(o, "process_name", ev->pid, ev->pid, base ? base + 1 : exe ? exe : "?");
}

static int on_coro(struct out_chrome *o, const struct ctp_event *ev)
{
	if (!ev->pid || !ev->coro)
		return 0;
	char name[NAME_SIZE];
	ctp_cat_names_coro(o->v.names, ev->pid, ev->coro, name, sizeof(name));
	return put_metadata(o, "thread_name", ev->pid, CORO_TID_BASE + ev->coro, name);
}

static int chrome_event(void *state, const struct ctp_event *ev)
{
	struct out_chrome *o = state;
	if (ctp_cat_names_see(o->v.names, ev) < 0)
		return -1;
	int rc = 0;
	switch (ev->type) {
	case CTP_EV_TRACE:
		o->start = ev->trace.start;
		break;
	case CTP_EV_SWITCH:
		rc = on_switch(o, ev);
		break;
	case CTP_EV_CORO:
		rc = on_coro(o, ev);
		break;
	case CTP_EV_PROCESS:
		rc = on_process(o, ev);
		break;
	case CTP_EV_LOSS:
		rc = on_loss(o, ev);
		break;
	case CTP_EV_EXIT:
		rc = ev->pid ? close_process(o, ev->pid) : 0;
		break;
	default:
		break;
	}
	return rc < 0 || ferror(o->v.f) ? -1 : 0;
}

/* A finding as an instant event: on the coroutine's track when it concerns one coroutine, else
 * on the thread's or the process's. Its time is when it began; a crash has none, so it sits at
 * the process's last event. */
static int put_finding(struct out_chrome *o, const struct ctp_finding *fd)
{
	const struct ctp_analysis_process *p = ctp_analysis_process_at(o->analysis, fd->process);
	uint64_t ts = fd->ts ? fd->ts : p ? p->last_ts : o->start;
	uint64_t track = fd->coro ? CORO_TID_BASE + fd->coro : fd->tid ? fd->tid : fd->pid;
	struct ctp_jsonw *w = &o->w;
	begin_event(o, "i", fd->pid, track);
	put_ts(o, ts ? ts : o->start);
	CTP_JSONW_LIT(w, ",\"s\":\"t\",\"cat\":\"finding\",\"name\":");
	ctp_jsonw_str(w, ctp_finding_kind_name(fd->kind));
	CTP_JSONW_LIT(w, ",\"args\":{\"coro\":");
	ctp_jsonw_u64(w, fd->coro);
	if (fd->fd >= 0) {
		CTP_JSONW_LIT(w, ",\"fd\":");
		ctp_jsonw_i64(w, fd->fd);
		CTP_JSONW_LIT(w, ",\"op\":");
		ctp_jsonw_str(w, fd->op);
	}
	if (fd->duration_ns) {
		CTP_JSONW_LIT(w, ",\"duration_ns\":");
		ctp_jsonw_u64(w, fd->duration_ns);
	}
	if (fd->count) {
		CTP_JSONW_LIT(w, ",\"count\":");
		ctp_jsonw_u64(w, fd->count);
		CTP_JSONW_LIT(w, ",\"coros\":[");
		for (size_t i = 0; fd->coros && i < fd->count; i++) {
			if (i)
				CTP_JSONW_LIT(w, ",");
			ctp_jsonw_u64(w, fd->coros[i]);
		}
		CTP_JSONW_LIT(w, "]");
	}
	if (fd->signal) {
		CTP_JSONW_LIT(w, ",\"signal\":");
		ctp_jsonw_i64(w, fd->signal);
	}
	if (fd->uncertain)
		CTP_JSONW_LIT(w, ",\"uncertain\":true");
	CTP_JSONW_LIT(w, "}");
	return end_event(o);
}

static int chrome_finish(void *state)
{
	struct out_chrome *o = state;
	for (size_t i = 0; i < ctp_analysis_finding_count(o->analysis); i++)
		if (put_finding(o, ctp_analysis_finding_at(o->analysis, i)) < 0)
			return -1;
	for (size_t i = 0; i < o->runs.n; i++)
		if (o->runs.runs[i].pid && close_process(o, o->runs.runs[i].pid) < 0)
			return -1;
	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", o->v.f);
	return fflush(o->v.f) == 0 ? 0 : -1;
}

static void chrome_free(void *state)
{
	struct out_chrome *o = state;
	ctp_jsonw_free(&o->w);
	ctp_runs_free(&o->runs);
	ctp_cat_view_free(o);
}

int ctp_cat_out_chrome_open(struct ctp_cat_output *out, FILE *f, const struct ctp_analysis *a)
{
	struct out_chrome *o = ctp_cat_view_new(sizeof(*o), f, true);
	if (!o)
		return -1;
	o->analysis = a;
	ctp_jsonw_init(&o->w);
	fputs("{\"traceEvents\":[\n", f);
	out->state = o;
	out->event = chrome_event;
	out->finish = chrome_finish;
	out->free = chrome_free;
	return 0;
}

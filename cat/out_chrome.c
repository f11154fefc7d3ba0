/* Chrome Trace Event JSON, for ui.perfetto.dev and chrome://tracing.
 *
 * Layout: a process per traced process; in it one track (a pseudo-thread, tid CORO_TID_BASE +
 * coroutine id, named "entry#id") per coroutine, holding its runs as complete `X` slices, and
 * the real threads' tracks holding the same runs, so one shows what a coroutine did and the
 * other what a thread ran. A flow arrow (`s` -> `f`) goes from the run that switched away to the
 * run it resumed. The report's findings (cat/analysis.h: crash, lost_wakeup, missed_readiness,
 * stuck, never_yielded, leak) become instant events, cat "finding", at the end of the file.
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

#include "cat/analysis.h"
#include "cat/cat.h"
#include "cat/names.h"
#include "ctp/jsonw.h"

#define OUT_BUFFER_SIZE (64u << 10)
/* Pseudo-thread ids of coroutine tracks: above any Linux tid (pid_max is at most 2^22). */
#define CORO_TID_BASE (1ull << 30)
#define NAME_SIZE 256

/* What one thread runs now. */
struct thread_run {
	uint64_t pid, tid;
	bool open;
	uint64_t coro, start;
	bool initial;	  /* the run began before the thread's first switch: no resume made it */
	uint64_t by;	  /* the coroutine that resumed it */
	char how[24];	  /* how it was resumed */
	uint64_t last_ts; /* latest time seen on the thread, for instant events */
};

struct out_chrome {
	FILE *f;
	struct ctp_cat_names *names;
	struct ctp_jsonw w;
	uint64_t start;
	bool any_event;
	/* "pid:tid" -> index into runs; slots of exited processes are reused via `free_slot`. */
	json_t *thread_index;
	struct thread_run *runs;
	size_t nruns, cap;
	uint64_t next_flow;
	/* The report's findings (cat/analysis.h), drawn once the trace is read and written as
	 * instant events at the end: the analysis sees every line as it passes. */
	struct ctp_analysis *analysis;
	bool analysed;
};

/* ---- event writing ---- */

static void begin_event(struct out_chrome *o, const char *ph, uint64_t pid, uint64_t tid)
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
	return fwrite_unlocked(o->w.buf, 1, o->w.len, o->f) == o->w.len ? 0 : -1;
}

static int put_metadata(struct out_chrome *o, const char *what, uint64_t pid, uint64_t tid,
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
static int put_run(struct out_chrome *o, const struct thread_run *r, uint64_t end)
{
	char name[NAME_SIZE];
	ctp_cat_names_coro(o->names, r->pid, r->coro, name, sizeof(name));
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
			ctp_jsonw_str(w, r->how);
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
static int put_flow(struct out_chrome *o, uint64_t pid, uint64_t from, uint64_t from_start,
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

static int put_instant(struct out_chrome *o, uint64_t pid, uint64_t tid, uint64_t ts,
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

/* ---- per-thread state ---- */

static struct thread_run *find_run(struct out_chrome *o, uint64_t pid, uint64_t tid, bool *made)
{
	char key[48];
	snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64, pid, tid);
	json_t *at = json_object_get(o->thread_index, key);
	*made = false;
	if (at)
		return &o->runs[json_integer_value(at)];
	size_t slot = o->nruns;
	for (size_t i = 0; i < o->nruns; i++)
		if (o->runs[i].pid == 0) {
			slot = i;
			break;
		}
	if (slot == o->nruns) {
		if (o->nruns == o->cap) {
			size_t cap = o->cap ? 2 * o->cap : 16;
			struct thread_run *grown = realloc(o->runs, cap * sizeof(*grown));
			if (!grown)
				return NULL;
			o->runs = grown;
			o->cap = cap;
		}
		o->nruns++;
	}
	if (json_object_set_new(o->thread_index, key, json_integer((json_int_t)slot)) < 0)
		return NULL;
	struct thread_run *r = &o->runs[slot];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->tid = tid;
	*made = true;
	return r;
}

/* Ends a process's threads: runs still open did not end within the trace. */
static int close_process(struct out_chrome *o, uint64_t pid)
{
	for (size_t i = 0; i < o->nruns; i++) {
		struct thread_run *r = &o->runs[i];
		if (r->pid != pid || pid == 0)
			continue;
		if (r->open && put_run(o, r, 0) < 0)
			return -1;
		char key[48];
		snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64, r->pid, r->tid);
		json_object_del(o->thread_index, key);
		r->pid = 0;
	}
	return 0;
}

/* ---- lines ---- */

static int on_switch(struct out_chrome *o, const json_t *j)
{
	uint64_t pid, tid, ts, from, to;
	if (!ctp_cat_u64(j, "pid", &pid) || !ctp_cat_u64(j, "tid", &tid) ||
	    !ctp_cat_u64(j, "ts", &ts) || !ctp_cat_u64(j, "from", &from) ||
	    !ctp_cat_u64(j, "to", &to))
		return 0;
	bool made;
	struct thread_run *r = find_run(o, pid, tid, &made);
	if (!r)
		return -1;
	if (made) {
		char name[48];
		snprintf(name, sizeof(name), "thread %" PRIu64, tid);
		if (put_metadata(o, "thread_name", pid, tid, name) < 0)
			return -1;
	}
	if (!r->open) {
		/* The thread's first switch: `from` ran since it was made here, if it was. */
		uint64_t created, made_on;
		json_t *c = ctp_cat_names_coro_line(o->names, pid, from);
		if (c && ctp_cat_u64(c, "ts", &created) && ctp_cat_u64(c, "tid", &made_on) &&
		    made_on == tid && created <= ts) {
			r->open = true;
			r->initial = true;
			r->coro = from;
			r->start = created;
		}
	}
	bool flow = r->open && r->coro == from;
	uint64_t from_start = r->start;
	if (r->open && put_run(o, r, ts) < 0)
		return -1;
	if (flow && put_flow(o, pid, from, from_start, to, ts) < 0)
		return -1;
	const char *how = json_string_value(json_object_get(j, "how"));
	r->open = true;
	r->initial = false;
	r->coro = to;
	r->start = ts;
	r->by = from;
	snprintf(r->how, sizeof(r->how), "%s", how ? how : "?");
	r->last_ts = ts;
	return 0;
}

static int on_loss(struct out_chrome *o, const json_t *j)
{
	uint64_t pid, tid, count = 0;
	if (!ctp_cat_u64(j, "pid", &pid) || !ctp_cat_u64(j, "tid", &tid))
		return 0;
	ctp_cat_u64(j, "count", &count);
	bool made;
	struct thread_run *r = find_run(o, pid, tid, &made);
	if (!r)
		return -1;
	char args[48];
	snprintf(args, sizeof(args), "{\"count\":%" PRIu64 "}", count);
	return put_instant(o, pid, tid, r->last_ts ? r->last_ts : o->start, "events lost", args);
}

static int on_process(struct out_chrome *o, const json_t *j)
{
	uint64_t pid;
	if (!ctp_cat_u64(j, "pid", &pid))
		return 0;
	/* An exec: the old image's runs end here. */
	if (close_process(o, pid) < 0)
		return -1;
	const char *exe = json_string_value(json_object_get(j, "exe"));
	const char *base = exe ? strrchr(exe, '/') : NULL;
	return put_metadata(o, "process_name", pid, pid, base ? base + 1 : exe ? exe : "?");
}

static int on_coro(struct out_chrome *o, const json_t *j)
{
	uint64_t pid, coro;
	if (!ctp_cat_u64(j, "pid", &pid) || !ctp_cat_u64(j, "coro", &coro))
		return 0;
	char name[NAME_SIZE];
	ctp_cat_names_coro(o->names, pid, coro, name, sizeof(name));
	return put_metadata(o, "thread_name", pid, CORO_TID_BASE + coro, name);
}

static int chrome_line(void *state, const struct ctp_trace_line *line)
{
	struct out_chrome *o = state;
	const json_t *j = line->json;
	const char *type = ctp_cat_type(j);
	ctp_cat_names_see(o->names, j);
	if (ctp_analysis_add_line(o->analysis, j) < 0)
		return -1;
	int rc = 0;
	if (strcmp(type, "trace") == 0) {
		ctp_cat_u64(j, "start", &o->start);
	} else if (strcmp(type, "switch") == 0) {
		rc = on_switch(o, j);
	} else if (strcmp(type, "coro") == 0) {
		rc = on_coro(o, j);
	} else if (strcmp(type, "process") == 0) {
		rc = on_process(o, j);
	} else if (strcmp(type, "loss") == 0) {
		rc = on_loss(o, j);
	} else if (strcmp(type, "exit") == 0) {
		uint64_t pid;
		if (ctp_cat_u64(j, "pid", &pid))
			rc = close_process(o, pid);
	}
	return rc < 0 || ferror(o->f) ? -1 : 0;
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

static void chrome_ended(void *state, const struct ctp_trace_end *end)
{
	struct out_chrome *o = state;
	if (!o->analysed && ctp_analysis_finish(o->analysis, end) == 0)
		o->analysed = true;
}

static int chrome_finish(void *state)
{
	struct out_chrome *o = state;
	/* Not told how reading ended (--follow stopped at the end line): judge what was read. */
	if (!o->analysed && ctp_analysis_finish(o->analysis, NULL) < 0)
		return -1;
	o->analysed = true;
	for (size_t i = 0; i < ctp_analysis_finding_count(o->analysis); i++)
		if (put_finding(o, ctp_analysis_finding_at(o->analysis, i)) < 0)
			return -1;
	for (size_t i = 0; i < o->nruns; i++)
		if (o->runs[i].pid && close_process(o, o->runs[i].pid) < 0)
			return -1;
	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", o->f);
	return fflush(o->f) == 0 ? 0 : -1;
}

static void chrome_free(void *state)
{
	struct out_chrome *o = state;
	ctp_cat_names_free(o->names);
	json_decref(o->thread_index);
	ctp_jsonw_free(&o->w);
	ctp_analysis_free(o->analysis);
	free(o->runs);
	free(o);
}

int ctp_cat_out_chrome_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_chrome *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->names = ctp_cat_names_new();
	o->thread_index = json_object();
	o->analysis = ctp_analysis_new(NULL);
	if (!o->names || !o->thread_index || !o->analysis) {
		ctp_cat_names_free(o->names);
		json_decref(o->thread_index);
		ctp_analysis_free(o->analysis);
		free(o);
		return -1;
	}
	ctp_jsonw_init(&o->w);
	o->f = f;
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	fputs("{\"traceEvents\":[\n", f);
	out->state = o;
	out->line = chrome_line;
	out->finish = chrome_finish;
	out->free = chrome_free;
	out->ended = chrome_ended;
	return 0;
}

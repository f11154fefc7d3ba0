/* `ctp-cat --report --json`: the same analysis as one JSON document for scripts. Every field is
 * in docs/report.md; a field that does not apply to a finding's kind is left out, one that
 * applies but is unknown is null. */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "cat/analysis/report.h"
#include "ctp/symbolize.h"

/* jansson's setters steal the value; a NULL value (out of memory) makes the set fail, which
 * the final dump turns into an error. */
static void set(json_t *obj, const char *key, json_t *v)
{
	json_object_set_new(obj, key, v ? v : json_null());
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *u64_or_null(uint64_t v)
{
	return v ? u64(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *fd_or_null(int fd)
{
	return fd >= 0 ? json_integer(fd) : json_null();
}

/* "stack": the program's frames as names; "frames": the same with file, line and module. */
static void set_stack(json_t *obj, const char *prefix, const struct ctp_analysis *a, size_t process,
		      uint32_t id)
{
	char key[64];
	json_t *names = json_array(), *frames = json_array();
	const struct ctp_analysis_stack *s = ctp_analysis_stack_in(a, process, id);
	if (s) {
		const struct ctp_analysis_frame *fr = s->frames;
		for (size_t i = 0; i < s->nframes; i++) {
			if (!ctp_cat_report_shows_frame(s, i))
				continue;
			char addr[32], place[512], module_off[32];
			snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fr[i].addr);
			snprintf(module_off, sizeof(module_off), "0x%llx",
				 (unsigned long long)fr[i].module_off);
			const char *name =
				fr[i].sym ? fr[i].sym
					  : ctp_frame_place(place, sizeof(place), fr[i].module,
							    fr[i].has_module_off, fr[i].module_off,
							    fr[i].addr);
			json_array_append_new(names, json_string(name));
			json_t *f = json_object();
			set(f, "sym", str_or_null(fr[i].sym));
			set(f, "file", str_or_null(fr[i].file));
			set(f, "line", fr[i].line ? json_integer(fr[i].line) : json_null());
			set(f, "module", str_or_null(fr[i].module));
			set(f, "addr", json_string(addr));
			set(f, "module_off",
			    fr[i].has_module_off ? json_string(module_off) : json_null());
			json_array_append_new(frames, f);
		}
	}
	snprintf(key, sizeof(key), "%sstack", prefix);
	set(obj, key, names);
	snprintf(key, sizeof(key), "%sframes", prefix);
	set(obj, key, frames);
	snprintf(key, sizeof(key), "%sstack_id", prefix);
	set(obj, key, u64_or_null(id));
}

static json_t *entry_of(const struct ctp_analysis *a, uint32_t pid, uint64_t coro)
{
	const struct ctp_analysis_coro *c = coro ? ctp_analysis_coro_find(a, pid, coro) : NULL;
	return str_or_null(c ? c->entry : NULL);
}

static json_t *id_list(const uint64_t *ids, size_t n)
{
	json_t *l = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(l, u64(ids[i]));
	return l;
}

static json_t *finding_json(const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	json_t *o = json_object();
	const struct ctp_analysis_process *p = ctp_analysis_process_at(a, fi->process);
	set(o, "kind", json_string(ctp_finding_kind_name(fi->kind)));
	set(o, "incident", u64(fi->incident));
	set(o, "pid", u64(fi->pid));
	set(o, "exe", str_or_null(p ? p->exe : NULL));
	set(o, "coro", u64_or_null(fi->coro));
	set(o, "entry", entry_of(a, fi->pid, fi->coro));
	set(o, "fd", fd_or_null(fi->fd));
	set(o, "op", str_or_null(fi->op));
	set_stack(o, "", a, fi->process, fi->stack);
	set(o, "uncertain", json_boolean(fi->uncertain));
	switch (fi->kind) {
	case CTP_FINDING_CRASH: {
		set(o, "signal", json_integer(fi->signal));
		set(o, "signal_name", json_string(ctp_cat_report_signal_name(fi->signal)));
		set(o, "tid", u64_or_null(fi->tid));
		char addr[32];
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fi->addr);
		set(o, "addr", fi->addr ? json_string(addr) : json_null());
		const struct ctp_analysis_coro *c =
			fi->coro ? ctp_analysis_coro_find(a, fi->pid, fi->coro) : NULL;
		set_stack(o, "created_", a, fi->process, c ? c->create_stack : 0);
		break;
	}
	case CTP_FINDING_LOST_WAKEUP: {
		set(o, "suspended_at", u64_or_null(fi->ts));
		set(o, "suspended_ns", u64(fi->duration_ns));
		if (!fi->close_ts) {
			set(o, "close", json_null());
			break;
		}
		json_t *c = json_object();
		set(c, "ts", u64(fi->close_ts));
		set(c, "coro", u64_or_null(fi->close_coro));
		set(c, "entry", entry_of(a, fi->pid, fi->close_coro));
		set(c, "tid", u64_or_null(fi->close_tid));
		set_stack(c, "", a, fi->process, fi->close_stack);
		set(o, "close", c);
		break;
	}
	case CTP_FINDING_MISSED_READINESS:
		set(o, "ready_at", u64(fi->ts));
		set(o, "delay_ns", u64(fi->duration_ns));
		set(o, "resumed", json_boolean(!fi->at_end));
		break;
	case CTP_FINDING_STUCK: {
		set(o, "count", u64(fi->count));
		set(o, "coros", id_list(fi->coros, fi->count));
		json_t *fds = json_array();
		for (size_t i = 0; i < fi->count; i++)
			json_array_append_new(fds, fd_or_null(fi->fds[i]));
		set(o, "fds", fds);
		set(o, "since", u64_or_null(fi->ts));
		set(o, "longest_ns", u64(fi->duration_ns));
		break;
	}
	case CTP_FINDING_LEAK:
		set(o, "count", u64(fi->count));
		set(o, "coros", id_list(fi->coros, fi->count));
		set(o, "entry", entry_of(a, fi->pid, fi->coros[0]));
		break;
	case CTP_FINDING_NEVER_YIELDED:
		set(o, "start", u64_or_null(fi->ts));
		set(o, "ran_ns", u64(fi->duration_ns));
		set(o, "tid", u64_or_null(fi->tid));
		set(o, "still_running", json_boolean(fi->at_end));
		break;
	}
	return o;
}

static json_t *process_json(const struct ctp_analysis_process *p)
{
	json_t *o = json_object(), *argv = json_array();
	set(o, "pid", u64(p->pid));
	set(o, "ppid", u64_or_null(p->ppid));
	set(o, "exe", str_or_null(p->exe));
	for (size_t i = 0; i < p->argc; i++)
		json_array_append_new(argv, json_string(p->argv[i]));
	set(o, "argv", argv);
	json_t *exit = NULL;
	switch (p->exit) {
	case CTP_ANALYSIS_EXIT_NONE:
		break;
	case CTP_ANALYSIS_EXIT_UNKNOWN:
		exit = json_pack("{s:n}", "status");
		break;
	case CTP_ANALYSIS_EXIT_STATUS:
		exit = json_pack("{s:i}", "status", p->exit_value);
		break;
	case CTP_ANALYSIS_EXIT_SIGNAL:
		exit = json_pack("{s:i}", "signal", p->exit_value);
		break;
	case CTP_ANALYSIS_EXIT_SNAPSHOT:
		/* Not an exit: it ran on; when its coroutines were looked at. */
		exit = json_pack("{s:I}", "snapshot", (json_int_t)p->snapshot_ts);
		break;
	}
	set(o, "exit", exit);
	set(o, "coroutines", u64(p->coroutines));
	set(o, "switches", u64(p->switches));
	set(o, "fd_events", u64(p->fd_events));
	set(o, "lost", u64(p->lost));
	return o;
}

static json_t *summary_json(const struct ctp_analysis *a)
{
	const struct ctp_analysis_summary *s = ctp_analysis_summary(a);
	json_t *o = json_object();
	set(o, "processes", u64(s->processes));
	set(o, "processes_ended", u64(s->processes_ended));
	set(o, "crashed", u64(s->crashed));
	set(o, "coroutines", u64(s->coroutines - s->threads));
	set(o, "threads", u64(s->threads));
	set(o, "switches", u64(s->switches));
	set(o, "fd_events", u64(s->fd_events));
	set(o, "lost", u64(s->lost));
	set(o, "stacks", u64(s->stacks));
	set(o, "idle", u64(s->idle));
	json_t *idle = json_array();
	for (size_t i = 0; i < ctp_analysis_coro_count(a); i++) {
		const struct ctp_analysis_coro *c = ctp_analysis_coro_at(a, i);
		if (!c->idle)
			continue;
		json_t *one = json_object();
		set(one, "pid", u64(c->pid));
		set(one, "coro", u64(c->id));
		set(one, "why", json_string(ctp_analysis_idle_name(c->idle)));
		json_array_append_new(idle, one);
	}
	set(o, "idle_coros", idle);
	set(o, "first_ts", u64_or_null(s->first_ts));
	set(o, "last_ts", u64_or_null(s->last_ts));
	set(o, "missing_lines", u64(s->missing_lines));
	set(o, "complete", json_boolean(s->complete));
	set(o, "uncertain", json_boolean(s->uncertain));
	set(o, "missed_after_ns", u64(s->missed_after_ns));
	set(o, "never_yielded_after_ns", u64(s->never_yielded_after_ns));
	json_t *counts = json_object();
	for (int k = 0; k <= CTP_FINDING_LEAK; k++)
		set(counts, ctp_finding_kind_name(k), json_integer(0));
	for (size_t i = 0; i < ctp_analysis_finding_count(a); i++) {
		const char *k = ctp_finding_kind_name(ctp_analysis_finding_at(a, i)->kind);
		set(counts, k, json_integer(json_integer_value(json_object_get(counts, k)) + 1));
	}
	set(o, "findings", counts);
	size_t incidents[CTP_FINDING_KIND_COUNT];
	ctp_analysis_count_incidents(a, incidents);
	json_t *by_kind = json_object();
	for (int k = 0; k < CTP_FINDING_KIND_COUNT; k++)
		set(by_kind, ctp_finding_kind_name(k), u64(incidents[k]));
	set(o, "incidents", by_kind);
	set(o, "failures", u64(ctp_analysis_failure_count(a)));
	json_t *procs = json_array();
	for (size_t i = 0; i < ctp_analysis_process_count(a); i++)
		json_array_append_new(procs, process_json(ctp_analysis_process_at(a, i)));
	set(o, "process_list", procs);
	return o;
}

int ctp_cat_report_json(FILE *f, const struct ctp_analysis *a, const char *name,
			const struct ctp_cat_report_refresh *refresh)
{
	json_t *doc = json_object(), *findings = json_array();
	if (!doc || !findings) {
		json_decref(doc);
		json_decref(findings);
		errno = ENOMEM;
		return -1;
	}
	set(doc, "trace", json_string(name));
	set(doc, "summary", summary_json(a));
	for (size_t i = 0; i < ctp_analysis_finding_count(a); i++)
		json_array_append_new(findings, finding_json(a, ctp_analysis_finding_at(a, i)));
	set(doc, "findings", findings);
	if (refresh)
		set(doc, "refresh",
		    json_pack("{s:I,s:b,s:o}", "report", (json_int_t)refresh->number, "final",
			      refresh->final, "snapshot_ts", u64_or_null(refresh->snapshot_ts)));
	size_t flags = refresh ? JSON_COMPACT : JSON_INDENT(1);
	int rc = json_dumpf(doc, f, flags | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (rc < 0 || fputc('\n', f) == EOF || fflush(f) != 0)
		return -1;
	return 0;
}

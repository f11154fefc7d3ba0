/* The findings, drawn from the model: once it is finished, or (ctp-cat --follow --report) from
 * the model as read so far, again at each snapshot, each time replacing the last findings.
 * docs/report.md defines each kind; the comments here say how the trace's evidence is weighed. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cat/analysis/analysis_internal.h"
#include "cat/model/grow.h"

const char *ctp_finding_kind_name(enum ctp_finding_kind kind)
{
	switch (kind) {
	case CTP_FINDING_CRASH:
		return "crash";
	case CTP_FINDING_LOST_WAKEUP:
		return "lost_wakeup";
	case CTP_FINDING_MISSED_READINESS:
		return "missed_readiness";
	case CTP_FINDING_STUCK:
		return "stuck";
	case CTP_FINDING_NEVER_YIELDED:
		return "never_yielded";
	case CTP_FINDING_LEAK:
		return "leak";
	}
	return "unknown";
}

bool ctp_finding_kind_is_failure(enum ctp_finding_kind kind)
{
	return kind == CTP_FINDING_CRASH || kind == CTP_FINDING_LOST_WAKEUP ||
	       kind == CTP_FINDING_MISSED_READINESS;
}

static struct ctp_finding *add(struct ctp_analysis *a, enum ctp_finding_kind kind,
			       const struct an_process *p)
{
	if (CTP_GROW(a->findings, a->cap_findings, a->nfindings + 1) < 0)
		return NULL;
	struct ctp_finding *f = &a->findings[a->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->process = p->pub.index;
	f->pid = p->pub.pid;
	f->fd = -1;
	/* Lost events may hide a switch or an fd event; a process whose end was not seen may
	 * still have resumed what looks stuck. */
	f->uncertain = p->pub.lost > 0 || !ctp_an_seen_to_end(a, p);
	if (ctp_finding_kind_is_failure(kind))
		a->failures++;
	return f;
}

/* A thread's own stack is "suspended" whenever the thread runs a coroutine: only coroutines
 * proper can be stuck, leak or hog a thread. */
static bool is_thread(const struct an_coro *c)
{
	return c->pub.kind && strcmp(c->pub.kind, "thread") == 0;
}

/* The final state line is authoritative (stations stay exact when events are lost); without
 * one, the switches tell. */
bool ctp_an_suspended_at_end(const struct an_coro *c)
{
	if (c->pub.state != CTP_ANALYSIS_STATE_UNKNOWN)
		return c->pub.state == CTP_ANALYSIS_STATE_SUSPENDED;
	return !c->pub.ended && c->pub.resumes > 0 &&
	       c->pub.last_suspend_ts >= c->pub.last_resume_ts;
}

static bool running_at_end(const struct an_coro *c)
{
	if (c->pub.state != CTP_ANALYSIS_STATE_UNKNOWN)
		return c->pub.state == CTP_ANALYSIS_STATE_RUNNING;
	return !c->pub.ended && c->pub.resumes > 0 &&
	       c->pub.last_resume_ts > c->pub.last_suspend_ts;
}

static bool ended(const struct an_coro *c)
{
	return c->pub.ended || c->pub.state == CTP_ANALYSIS_STATE_EXITED;
}

static uint64_t suspended_since(const struct an_coro *c)
{
	return c->pub.state_since ? c->pub.state_since : c->pub.last_suspend_ts;
}

uint32_t ctp_an_suspend_stack(const struct ctp_analysis *a, const struct an_coro *c)
{
	if (c->pub.state_stack)
		return c->pub.state_stack;
	return c->pub.last_suspend_stack ? c->pub.last_suspend_stack
					 : ctp_an_side(a, c)->wait_stack;
}

/* The fd it waits on at the end: the station's word, else its last EAGAIN if it has not run
 * since. */
int ctp_an_final_wait_fd(const struct ctp_analysis *a, const struct an_coro *c, const char **op)
{
	if (c->pub.wait_fd >= 0) {
		*op = c->pub.wait_op;
		return c->pub.wait_fd;
	}
	const struct an_side *ft = ctp_an_side(a, c);
	if (ft->wait_fd >= 0 && ft->wait_ts >= c->pub.last_resume_ts) {
		*op = ft->wait_op;
		return ft->wait_fd;
	}
	*op = NULL;
	return -1;
}

static uint64_t since_to(uint64_t since, uint64_t end)
{
	return since && end > since ? end - since : 0;
}

/* Suspended at the end, waiting on an fd that was closed while it waited, never resumed after
 * the close. Evidence: a `close` line naming it (after its last resume), or the station's
 * wait.closed. A station that says it waits on another, open fd overrules a close line. */
static int find_lost_wakeup(struct ctp_analysis *a, const struct an_process *p,
			    const struct an_coro *c, bool *found)
{
	*found = false;
	const struct an_side *ft = ctp_an_side(a, c);
	bool close_seen = ft->close_ts && ft->close_ts >= c->pub.last_resume_ts;
	bool station_closed = c->pub.wait_closed == 1;
	if (!close_seen && !station_closed)
		return 0;
	if (!station_closed && c->pub.wait_fd >= 0 && c->pub.wait_fd != ft->closed_fd)
		return 0;
	struct ctp_finding *f = add(a, CTP_FINDING_LOST_WAKEUP, p);
	if (!f)
		return -1;
	*found = true;
	f->coro = c->pub.id;
	f->fd = ctp_an_final_wait_fd(a, c, &f->op);
	if (f->fd < 0) {
		f->fd = ft->closed_fd;
		f->op = ft->wait_op;
	}
	f->stack = ctp_an_suspend_stack(a, c);
	f->ts = suspended_since(c);
	f->duration_ns = since_to(f->ts, ctp_an_process_end(a, p));
	f->at_end = true;
	if (close_seen && (ft->closed_fd == f->fd || c->pub.wait_fd < 0)) {
		f->close_ts = ft->close_ts;
		f->close_coro = ft->close_coro;
		f->close_tid = ft->close_tid;
		f->close_stack = ft->close_stack;
	}
	return 0;
}

/* *at_end: it found readiness that was never answered by the end (the coroutine's story). */
static int find_missed_readiness(struct ctp_analysis *a, const struct an_process *p,
				 const struct an_coro *c, bool lost, bool *at_end)
{
	*at_end = false;
	uint64_t end = ctp_an_process_end(a, p);
	const struct an_side *ft = ctp_an_side(a, c);
	/* Not resumed by the end. A lost wakeup already explains it; readiness reported in the
	 * last moments before the end is not judged. */
	if (ft->ready_ts && !lost && ctp_an_suspended_at_end(c) &&
	    since_to(ft->ready_ts, end) >= a->opt.missed_after_ns) {
		struct ctp_finding *f = add(a, CTP_FINDING_MISSED_READINESS, p);
		if (!f)
			return -1;
		f->coro = c->pub.id;
		f->fd = ft->ready_fd;
		f->op = ft->ready_op;
		f->stack = ctp_an_suspend_stack(a, c);
		f->ts = ft->ready_ts;
		f->duration_ns = since_to(ft->ready_ts, end);
		f->at_end = true;
		*at_end = true;
		return 0;
	}
	if (ft->late_ns) {
		struct ctp_finding *f = add(a, CTP_FINDING_MISSED_READINESS, p);
		if (!f)
			return -1;
		f->coro = c->pub.id;
		f->fd = ft->late_fd;
		f->op = ft->late_op;
		f->stack = ft->late_stack;
		f->ts = ft->late_ready_ts;
		f->duration_ns = ft->late_ns;
	}
	return 0;
}

static int find_never_yielded(struct ctp_analysis *a, const struct an_process *p,
			      const struct an_coro *c)
{
	uint64_t limit = a->opt.never_yielded_after_ns;
	uint64_t at_end =
		running_at_end(c) ? since_to(c->pub.last_resume_ts, ctp_an_process_end(a, p)) : 0;
	if (c->pub.longest_run_ns <= limit && at_end <= limit)
		return 0;
	struct ctp_finding *f = add(a, CTP_FINDING_NEVER_YIELDED, p);
	if (!f)
		return -1;
	f->coro = c->pub.id;
	if (at_end > c->pub.longest_run_ns) {
		f->ts = c->pub.last_resume_ts;
		f->duration_ns = at_end;
		f->tid = c->pub.last_tid;
		f->at_end = true;
	} else {
		f->ts = ctp_an_side(a, c)->longest_run_start;
		f->duration_ns = c->pub.longest_run_ns;
		f->tid = ctp_an_side(a, c)->longest_run_tid;
		f->stack = ctp_an_side(a, c)->longest_run_stack;
	}
	return 0;
}

/* Whether a process that died of sig crashed: a signal of its own doing (a fault, an abort, a
 * trap, a forbidden syscall). SIGTERM, SIGINT, SIGHUP, SIGKILL and the like are how processes are
 * stopped: an end, not a crash. */
static bool crash_signal(int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGABRT:
	case SIGTRAP:
	case SIGSYS:
		return true;
	}
	return false;
}

static int find_crash(struct ctp_analysis *a, const struct an_process *p)
{
	if (p->pub.exit != CTP_ANALYSIS_EXIT_SIGNAL || !crash_signal(p->pub.exit_value))
		return 0;
	struct ctp_finding *f = add(a, CTP_FINDING_CRASH, p);
	if (!f)
		return -1;
	f->uncertain = false; /* the exit line itself is the evidence */
	f->coro = p->pub.crash_coro;
	f->signal = p->pub.exit_value;
	f->tid = p->pub.crash_tid;
	f->addr = p->pub.crash_addr;
	f->stack = p->pub.crash_stack;
	return 0;
}

/* ---- groups: stuck (by suspend stack) and leak (by creation stack) ---- */

struct member {
	size_t process;
	uint32_t stack;
	size_t coro; /* index in a->coros */
	uint64_t id;
};

static int by_group(const void *x, const void *y)
{
	const struct member *m = x, *n = y;
	if (m->process != n->process)
		return m->process < n->process ? -1 : 1;
	if (m->stack != n->stack)
		return m->stack < n->stack ? -1 : 1;
	return m->id < n->id ? -1 : m->id > n->id;
}

static int add_group(struct ctp_analysis *a, enum ctp_finding_kind kind, const struct member *m,
		     size_t n)
{
	const struct an_process *p = &a->procs[m[0].process];
	uint64_t *coros = malloc(n * sizeof(*coros));
	int *fds = kind == CTP_FINDING_STUCK ? malloc(n * sizeof(*fds)) : NULL;
	struct ctp_finding *f =
		coros && (fds || kind != CTP_FINDING_STUCK) ? add(a, kind, p) : NULL;
	if (!f) {
		free(coros);
		free(fds);
		return -1;
	}
	f->coros = coros;
	f->fds = fds;
	f->count = n;
	f->stack = m[0].stack;
	uint64_t end = ctp_an_process_end(a, p);
	const char *op = NULL;
	bool same_op = true;
	for (size_t i = 0; i < n; i++) {
		const struct an_coro *c = &a->coros[m[i].coro];
		coros[i] = c->pub.id;
		if (kind != CTP_FINDING_STUCK)
			continue;
		const char *cop;
		fds[i] = ctp_an_final_wait_fd(a, c, &cop);
		if (i == 0)
			op = cop;
		else if (cop != op)
			same_op = false;
		uint64_t since = suspended_since(c);
		if (since && (!f->ts || since < f->ts))
			f->ts = since;
	}
	if (kind == CTP_FINDING_STUCK) {
		f->op = same_op ? op : NULL;
		f->duration_ns = since_to(f->ts, end);
		f->at_end = true;
	}
	return 0;
}

/* explained[i]: coroutine i is already a lost wakeup or a missed readiness at the end. That
 * finding tells its story; listing it again as stuck, or as leaked, would count one cause three
 * times. An idle coroutine (analysis_idle.c) waits in its runtime's pool as meant: neither. */
static int find_groups(struct ctp_analysis *a, enum ctp_finding_kind kind, const bool *explained)
{
	struct member *m = malloc((a->ncoros ? a->ncoros : 1) * sizeof(*m));
	if (!m)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < a->ncoros; i++) {
		const struct an_coro *c = &a->coros[i];
		if (is_thread(c) || explained[i] || c->pub.idle)
			continue;
		if (kind == CTP_FINDING_STUCK && ctp_an_suspended_at_end(c))
			m[n++] = (struct member){c->pub.process, ctp_an_suspend_stack(a, c), i,
						 c->pub.id};
		/* A process killed by a signal ended nothing: its crash is the finding. A live
		 * snapshot's coroutines have not outlived anything: the process still runs. One
		 * running at the end was at work when its process ended (it may have called exit
		 * itself): nothing forgot it. */
		else if (kind == CTP_FINDING_LEAK && !ended(c) && !running_at_end(c) &&
			 a->procs[c->pub.process].pub.exit != CTP_ANALYSIS_EXIT_SIGNAL &&
			 a->procs[c->pub.process].pub.exit != CTP_ANALYSIS_EXIT_SNAPSHOT)
			m[n++] = (struct member){c->pub.process, c->pub.create_stack, i, c->pub.id};
	}
	qsort(m, n, sizeof(*m), by_group);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		size_t j = i + 1;
		while (j < n && m[j].process == m[i].process && m[j].stack == m[i].stack)
			j++;
		rc = add_group(a, kind, &m[i], j - i);
		i = j;
	}
	free(m);
	return rc;
}

/* Lost wakeups tell one story when one close path stranded them: same process, same wait,
 * same closer at the same place, same operation. */
static bool same_lost_wakeup(const struct ctp_finding *f, const struct ctp_finding *g)
{
	return f->kind == CTP_FINDING_LOST_WAKEUP && g->kind == CTP_FINDING_LOST_WAKEUP &&
	       f->process == g->process && f->stack == g->stack &&
	       f->close_stack == g->close_stack && f->close_coro == g->close_coro && f->op == g->op;
}

static int by_story(const struct ctp_finding *f, const struct ctp_finding *g)
{
	if (f->stack != g->stack)
		return f->stack < g->stack ? -1 : 1;
	if (f->close_stack != g->close_stack)
		return f->close_stack < g->close_stack ? -1 : 1;
	if (f->close_coro != g->close_coro)
		return f->close_coro < g->close_coro ? -1 : 1;
	return f->op == g->op ? 0 : (uintptr_t)f->op < (uintptr_t)g->op ? -1 : 1;
}

/* Most important first: by kind, bigger groups first, then by process; lost wakeups of one
 * story next to each other; then by coroutine. */
static int by_importance(const void *x, const void *y)
{
	const struct ctp_finding *f = x, *g = y;
	if (f->kind != g->kind)
		return f->kind < g->kind ? -1 : 1;
	if (f->count != g->count)
		return f->count > g->count ? -1 : 1;
	if (f->process != g->process)
		return f->process < g->process ? -1 : 1;
	if (f->kind == CTP_FINDING_LOST_WAKEUP) {
		int story = by_story(f, g);
		if (story)
			return story;
	}
	if (f->coro != g->coro)
		return f->coro < g->coro ? -1 : 1;
	return f->stack < g->stack ? -1 : f->stack > g->stack;
}

/* Numbers the incidents in report order: every finding is one, except lost wakeups of one
 * story, which share theirs. */
static void number_incidents(struct ctp_analysis *a)
{
	uint32_t incident = 0;
	for (size_t i = 0; i < a->nfindings; i++) {
		struct ctp_finding *f = &a->findings[i];
		if (!i || !same_lost_wakeup(&a->findings[i - 1], f))
			incident++;
		f->incident = incident;
	}
}

/* Forgets the findings of an earlier judgement: memory stays that of one set of findings. */
static void drop_findings(struct ctp_analysis *a)
{
	for (size_t i = 0; i < a->nfindings; i++) {
		free((void *)a->findings[i].coros);
		free((void *)a->findings[i].fds);
	}
	a->nfindings = 0;
	a->failures = 0;
}

/* Draws the findings from the model as it is now. Nothing here changes the model: the events
 * that follow a judgement so far go on from where they left it. */
static int judge(struct ctp_analysis *a, const struct ctp_trace_end *end, bool live)
{
	drop_findings(a);
	ctp_an_take_end(a, end, live);
	for (size_t i = 0; i < a->nprocs; i++)
		if (find_crash(a, &a->procs[i]) < 0)
			return -1;
	bool *explained = calloc(a->ncoros ? a->ncoros : 1, sizeof(*explained));
	if (!explained)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < a->ncoros && rc == 0; i++) {
		const struct an_coro *c = &a->coros[i];
		const struct an_process *p = &a->procs[c->pub.process];
		if (is_thread(c))
			continue;
		bool lost = false, missed = false;
		if (ctp_an_suspended_at_end(c) && find_lost_wakeup(a, p, c, &lost) < 0)
			rc = -1;
		else if (find_missed_readiness(a, p, c, lost, &missed) < 0 ||
			 find_never_yielded(a, p, c) < 0)
			rc = -1;
		explained[i] = lost || missed;
	}
	if (rc == 0 && ctp_an_find_idle(a, explained) < 0)
		rc = -1;
	if (rc == 0 && (find_groups(a, CTP_FINDING_STUCK, explained) < 0 ||
			find_groups(a, CTP_FINDING_LEAK, explained) < 0))
		rc = -1;
	free(explained);
	if (rc < 0)
		return -1;
	if (a->nfindings > 1) /* (qsort must not get the NULL of no findings) */
		qsort(a->findings, a->nfindings, sizeof(*a->findings), by_importance);
	number_incidents(a);
	return 0;
}

int ctp_analysis_judge_so_far(struct ctp_analysis *a)
{
	return a->finished ? 0 : judge(a, NULL, true);
}

int ctp_analysis_finish(struct ctp_analysis *a, const struct ctp_trace_end *end)
{
	if (a->finished)
		return 0;
	a->finished = true;
	return judge(a, end, false);
}

void ctp_analysis_count_incidents(const struct ctp_analysis *a,
				  size_t counts[CTP_FINDING_KIND_COUNT])
{
	memset(counts, 0, CTP_FINDING_KIND_COUNT * sizeof(*counts));
	for (size_t i = 0; i < a->nfindings; i++)
		if (!i || a->findings[i].incident != a->findings[i - 1].incident)
			counts[a->findings[i].kind]++;
}

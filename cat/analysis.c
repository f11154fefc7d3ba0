/* The model of a trace, built line by line. Lines of different threads reach the trace in the
 * order their rings were harvested, not in time order, so everything here compares the lines'
 * own times (`ts`) rather than trusting the order of the lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cat/analysis_internal.h"
#include "ctp/names.h"
#include "ctp/segment.h"

void ctp_analysis_options_default(struct ctp_analysis_options *opt)
{
	opt->missed_after_ns = CTP_NS_PER_SEC;
	opt->never_yielded_after_ns = CTP_NS_PER_SEC;
}

int ctp_an_reserve(void **items, size_t *cap, size_t count, size_t size)
{
	if (count < *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	void *p = realloc(*items, n * size);
	if (!p)
		return -1;
	*items = p;
	*cap = n;
	return 0;
}

#define RESERVE(arr, cap, count) ctp_an_reserve((void **)&(arr), &(cap), (count), sizeof(*(arr)))

/* ---- reading fields ---- */

static bool get_u64(const json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* A number field, 0 when missing or null (ids and times of 0 mean unknown in a trace). */
static uint64_t u64_or_0(const json_t *obj, const char *key)
{
	uint64_t v = 0;
	get_u64(obj, key, &v);
	return v;
}

static const char *get_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static uint64_t hex_or_0(const json_t *obj, const char *key)
{
	const char *s = get_str(obj, key);
	return s ? strtoull(s, NULL, 16) : 0;
}

/* Operation names as the contract's static words: the model keeps no copy per event. */
static const char *op_static(const char *op)
{
	if (!op)
		return NULL;
	const char *name =
		ctp_name_of(&ctp_op_names, ctp_name_find(&ctp_op_names, op, strlen(op), 0));
	return name ? name : "other";
}

static void see_ts(struct ctp_analysis *a, struct an_process *p, uint64_t ts)
{
	if (!ts)
		return;
	if (!a->sum.first_ts || ts < a->sum.first_ts)
		a->sum.first_ts = ts;
	if (ts > a->sum.last_ts)
		a->sum.last_ts = ts;
	if (p) {
		if (!p->pub.first_ts || ts < p->pub.first_ts)
			p->pub.first_ts = ts;
		if (ts > p->pub.last_ts)
			p->pub.last_ts = ts;
	}
}

/* ---- processes, coroutines, stacks ---- */

static struct an_process *new_process(struct ctp_analysis *a, uint32_t pid)
{
	if (RESERVE(a->procs, a->cap_procs, a->nprocs) < 0)
		return NULL;
	size_t i = a->nprocs;
	if (ctp_amap_put(&a->latest_proc, pid, (uint32_t)i) < 0)
		return NULL;
	struct an_process *p = &a->procs[i];
	memset(p, 0, sizeof(*p));
	p->pub.index = i;
	p->pub.pid = pid;
	a->nprocs++;
	a->sum.processes++;
	return p;
}

/* The latest record of `pid`, made when a line names a pid before its `process` line. */
static struct an_process *process_of(struct ctp_analysis *a, const json_t *line)
{
	uint64_t pid;
	if (!get_u64(line, "pid", &pid) || pid > UINT32_MAX)
		return NULL;
	uint32_t i;
	if (ctp_amap_get(&a->latest_proc, pid, &i))
		return &a->procs[i];
	return new_process(a, (uint32_t)pid);
}

static struct an_coro *find_coro(struct ctp_analysis *a, struct an_process *p, uint64_t id)
{
	uint32_t i;
	return ctp_amap_get(&p->coros, id, &i) ? &a->coros[i] : NULL;
}

/* The coroutine `id` of `p`, made on first mention (a `switch` may name one whose `coro` line was
 * lost). NULL for id 0 or when out of memory. */
static struct an_coro *coro_of(struct ctp_analysis *a, struct an_process *p, uint64_t id)
{
	if (!id)
		return NULL;
	struct an_coro *c = find_coro(a, p, id);
	if (c)
		return c;
	if (RESERVE(a->coros, a->cap_coros, a->ncoros) < 0 ||
	    ctp_amap_put(&p->coros, id, (uint32_t)a->ncoros) < 0)
		return NULL;
	c = &a->coros[a->ncoros++];
	memset(c, 0, sizeof(*c));
	c->pub.process = p->pub.index;
	c->pub.pid = p->pub.pid;
	c->pub.id = id;
	c->pub.wait_fd = -1;
	c->pub.wait_closed = -1;
	c->wait_fd = c->closed_fd = c->ready_fd = c->late_fd = -1;
	p->pub.coroutines++;
	a->sum.coroutines++;
	return c;
}

static int on_process(struct ctp_analysis *a, const json_t *line)
{
	uint64_t pid;
	if (!get_u64(line, "pid", &pid) || pid > UINT32_MAX)
		return 0;
	uint32_t i;
	struct an_process *p = NULL;
	if (ctp_amap_get(&a->latest_proc, pid, &i)) {
		p = &a->procs[i];
		/* A second hello from the same pid is an exec: a new program, a new record. */
		if (p->seen_process_line || p->pub.coroutines) {
			p->exec_replaced = true;
			p = NULL;
		}
	}
	if (!p && !(p = new_process(a, (uint32_t)pid)))
		return -1;
	p->seen_process_line = true;
	p->pub.ppid = (uint32_t)u64_or_0(line, "ppid");
	if (get_str(line, "exe") &&
	    !(p->pub.exe = ctp_astrings_intern(&a->strings, get_str(line, "exe"))))
		return -1;
	json_t *argv = json_object_get(line, "argv");
	size_t n = json_is_array(argv) ? json_array_size(argv) : 0;
	p->argv = calloc(n + 1, sizeof(*p->argv));
	if (!p->argv)
		return -1;
	for (size_t k = 0; k < n; k++) {
		const char *s = json_string_value(json_array_get(argv, k));
		if (!(p->argv[p->pub.argc] = strdup(s ? s : "")))
			return -1;
		p->pub.argc++;
	}
	p->pub.argv = (const char *const *)p->argv;
	return 0;
}

static int on_coro(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	struct an_coro *c = coro_of(a, p, u64_or_0(line, "coro"));
	if (!c)
		return u64_or_0(line, "coro") ? -1 : 0;
	struct ctp_analysis_coro *pc = &c->pub;
	if (get_str(line, "kind") &&
	    !(pc->kind = ctp_astrings_intern(&a->strings, get_str(line, "kind"))))
		return -1;
	if (get_str(line, "entry") &&
	    !(pc->entry = ctp_astrings_intern(&a->strings, get_str(line, "entry"))))
		return -1;
	if (pc->kind && strcmp(pc->kind, "thread") == 0)
		a->sum.threads++;
	pc->entry_addr = hex_or_0(line, "entry_addr");
	pc->parent = u64_or_0(line, "parent");
	pc->tid = (uint32_t)u64_or_0(line, "tid");
	pc->created_ts = u64_or_0(line, "ts");
	pc->create_stack = (uint32_t)u64_or_0(line, "stack");
	see_ts(a, p, pc->created_ts);
	return 0;
}

static int on_switch(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	uint64_t ts = u64_or_0(line, "ts");
	uint32_t tid = (uint32_t)u64_or_0(line, "tid");
	uint32_t stack = (uint32_t)u64_or_0(line, "stack");
	const char *how = get_str(line, "how");
	a->sum.switches++;
	p->pub.switches++;
	see_ts(a, p, ts);

	struct an_coro *from = coro_of(a, p, u64_or_0(line, "from"));
	struct an_coro *to = coro_of(a, p, u64_or_0(line, "to"));
	if ((u64_or_0(line, "from") && !from) || (u64_or_0(line, "to") && !to))
		return -1;
	if (from) {
		struct ctp_analysis_coro *f = &from->pub;
		/* A return, or a setcontext away (the context that leaves is never resumed
		 * through that call), ends the coroutine. */
		if (how && (strcmp(how, "return") == 0 || strcmp(how, "setcontext") == 0)) {
			f->ended = true;
			f->ended_ts = ts;
		}
		/* A run's resume and suspend come from the same thread's ring, in order; a resume
		 * read later than this suspend belongs to a later run and is newer. */
		if (f->last_resume_ts && ts >= f->last_resume_ts) {
			uint64_t run = ts - f->last_resume_ts;
			if (run > f->longest_run_ns) {
				f->longest_run_ns = run;
				f->longest_run_start = f->last_resume_ts;
				from->longest_run_tid = tid;
				from->longest_run_stack = stack;
			}
		}
		if (ts >= f->last_suspend_ts) {
			f->last_suspend_ts = ts;
			f->last_suspend_stack = stack;
		}
	}
	if (to) {
		struct ctp_analysis_coro *t = &to->pub;
		t->resumes++;
		if (t->ended && ts > t->ended_ts && t->state != CTP_ANALYSIS_STATE_EXITED)
			t->ended = false; /* resumed after all: a saved copy of its context */
		if (ts >= t->last_resume_ts) {
			t->last_resume_ts = ts;
			t->last_tid = tid;
		}
		if (to->ready_ts && ts >= to->ready_ts) {
			uint64_t late = ts - to->ready_ts;
			if (late > a->opt.missed_after_ns && late > to->late_ns) {
				to->late_ns = late;
				to->late_fd = to->ready_fd;
				to->late_op = to->ready_op;
				to->late_ready_ts = to->ready_ts;
				to->late_stack = t->last_suspend_stack;
			}
			to->ready_ts = 0;
		}
	}
	return 0;
}

static int on_stack(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	uint64_t id;
	if (!get_u64(line, "id", &id) || !id || id > UINT32_MAX)
		return 0;
	uint32_t known;
	if (ctp_amap_get(&p->stacks, id, &known))
		return 0;
	json_t *frames = json_object_get(line, "frames");
	size_t n = json_is_array(frames) ? json_array_size(frames) : 0;
	struct ctp_analysis_frame *fr = calloc(n ? n : 1, sizeof(*fr));
	if (!fr || RESERVE(a->stacks, a->cap_stacks, a->nstacks) < 0 ||
	    ctp_amap_put(&p->stacks, id, (uint32_t)a->nstacks) < 0) {
		free(fr);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *f = json_array_get(frames, i);
		fr[i].addr = hex_or_0(f, "addr");
		fr[i].off = u64_or_0(f, "off");
		fr[i].line = (int)u64_or_0(f, "line");
		const char *sym = get_str(f, "sym"), *mod = get_str(f, "module"),
			   *file = get_str(f, "file");
		fr[i].sym = ctp_astrings_intern(&a->strings, sym);
		fr[i].module = ctp_astrings_intern(&a->strings, mod);
		fr[i].file = ctp_astrings_intern(&a->strings, file);
		if ((sym && !fr[i].sym) || (mod && !fr[i].module) || (file && !fr[i].file)) {
			free(fr);
			return -1;
		}
	}
	a->stacks[a->nstacks++] = (struct ctp_analysis_stack){
		.pid = p->pub.pid, .id = (uint32_t)id, .nframes = n, .frames = fr};
	a->sum.stacks++;
	return 0;
}

/* Trace format 2 says when a coroutine ended: nothing resumes it after that. */
static int on_coro_end(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	struct an_coro *c = coro_of(a, p, u64_or_0(line, "coro"));
	if (!c)
		return u64_or_0(line, "coro") ? -1 : 0;
	c->pub.ended = true;
	c->pub.ended_ts = u64_or_0(line, "ts");
	see_ts(a, p, c->pub.ended_ts);
	return 0;
}

static void on_loss(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	uint64_t n = u64_or_0(line, "count");
	a->sum.lost += n;
	p->pub.lost += n;
}

static enum ctp_analysis_state state_of(const char *s)
{
	/* enum ctp_analysis_state keeps the values of the contract's enum ctp_coro_state. */
	return s ? (enum ctp_analysis_state)ctp_name_find(&ctp_state_names, s, strlen(s), 0)
		 : CTP_ANALYSIS_STATE_UNKNOWN;
}

static int on_state(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	struct an_coro *c = coro_of(a, p, u64_or_0(line, "coro"));
	if (!c)
		return u64_or_0(line, "coro") ? -1 : 0;
	struct ctp_analysis_coro *pc = &c->pub;
	p->pub.has_states = true;
	pc->state = state_of(get_str(line, "state"));
	pc->state_tid = (uint32_t)u64_or_0(line, "tid");
	pc->state_since = u64_or_0(line, "since");
	pc->state_stack = (uint32_t)u64_or_0(line, "stack");
	pc->state_switches = u64_or_0(line, "switches");
	if (pc->state == CTP_ANALYSIS_STATE_EXITED)
		pc->ended = true;
	/* What it waits on: {"wait": {"fd", "op", "closed"}}, or the older flat fields. */
	json_t *wait = json_object_get(line, "wait");
	uint64_t fd;
	if (json_is_object(wait) && get_u64(wait, "fd", &fd)) {
		pc->wait_fd = (int)fd;
		pc->wait_op = op_static(get_str(wait, "op"));
		json_t *closed = json_object_get(wait, "closed");
		pc->wait_closed = json_is_boolean(closed) ? json_is_true(closed) : -1;
	} else if (get_u64(line, "wait_fd", &fd)) {
		pc->wait_fd = (int)fd;
		pc->wait_op = op_static(get_str(line, "wait_op"));
	}
	see_ts(a, p, pc->state_since);
	return 0;
}

static void on_exit_line(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	struct ctp_analysis_process *pp = &p->pub;
	uint64_t v;
	json_t *sig = json_object_get(line, "signal");
	if (json_is_integer(sig)) {
		pp->exit = CTP_ANALYSIS_EXIT_SIGNAL;
		pp->exit_value = (int)json_integer_value(sig);
		pp->crash_tid = (uint32_t)u64_or_0(line, "tid");
		pp->crash_coro = u64_or_0(line, "coro");
		pp->crash_addr = hex_or_0(line, "addr");
		pp->crash_stack = (uint32_t)u64_or_0(line, "stack");
		a->sum.crashed++;
	} else if (get_u64(line, "status", &v) ||
		   json_is_integer(json_object_get(line, "status"))) {
		pp->exit = CTP_ANALYSIS_EXIT_STATUS;
		pp->exit_value = (int)json_integer_value(json_object_get(line, "status"));
	} else {
		pp->exit = CTP_ANALYSIS_EXIT_UNKNOWN;
	}
	p->exit_ts = u64_or_0(line, "ts");
	see_ts(a, p, p->exit_ts);
	a->sum.processes_ended++;
}

/* ---- fd lines ---- */

static struct an_fd_waiter *fd_waiter(struct ctp_analysis *a, struct an_process *p, int fd,
				      bool make)
{
	(void)a;
	uint32_t i;
	if (ctp_amap_get(&p->fds, (uint64_t)fd, &i))
		return &p->fd_waiters[i];
	if (!make || RESERVE(p->fd_waiters, p->cap_fd_waiters, p->nfd_waiters) < 0 ||
	    ctp_amap_put(&p->fds, (uint64_t)fd, (uint32_t)p->nfd_waiters) < 0)
		return NULL;
	struct an_fd_waiter *w = &p->fd_waiters[p->nfd_waiters++];
	*w = (struct an_fd_waiter){0};
	return w;
}

/* The coroutine an fd line is about: its `waiter`, else the last one that got EAGAIN on the fd
 * and has not been resumed since (so still parked on it). */
static struct an_coro *waiter_of(struct ctp_analysis *a, struct an_process *p, const json_t *line,
				 int fd)
{
	uint64_t id = u64_or_0(line, "waiter");
	if (id)
		return coro_of(a, p, id);
	struct an_fd_waiter *w = fd_waiter(a, p, fd, false);
	if (!w || !w->coro)
		return NULL;
	struct an_coro *c = find_coro(a, p, w->coro);
	return c && c->wait_fd == fd && c->wait_ts >= c->pub.last_resume_ts ? c : NULL;
}

static int on_would_block(struct ctp_analysis *a, struct an_process *p, const json_t *line, int fd,
			  uint64_t ts)
{
	uint64_t id = u64_or_0(line, "coro");
	struct an_coro *c = coro_of(a, p, id);
	if (!c)
		return id ? -1 : 0;
	if (ts >= c->wait_ts) {
		c->wait_fd = fd;
		c->wait_op = op_static(get_str(line, "op"));
		c->wait_ts = ts;
		c->wait_stack = (uint32_t)u64_or_0(line, "stack");
		/* A close or readiness from before this wait belongs to an earlier one. */
		if (c->close_ts && c->close_ts < ts)
			c->close_ts = 0;
		if (c->ready_ts && c->ready_ts < ts)
			c->ready_ts = 0;
	}
	struct an_fd_waiter *w = fd_waiter(a, p, fd, true);
	if (!w)
		return -1;
	if (ts >= w->ts) {
		w->coro = id;
		w->ts = ts;
	}
	return 0;
}

static int on_close(struct ctp_analysis *a, struct an_process *p, const json_t *line, int fd,
		    uint64_t ts)
{
	struct an_coro *c = waiter_of(a, p, line, fd);
	if (!c && u64_or_0(line, "waiter"))
		return -1;
	/* The first close after the wait began is the one that stranded it. */
	if (c && (!c->wait_ts || ts >= c->wait_ts) && (!c->close_ts || ts < c->close_ts)) {
		c->closed_fd = fd;
		c->close_ts = ts;
		c->close_coro = u64_or_0(line, "coro");
		c->close_tid = (uint32_t)u64_or_0(line, "tid");
		c->close_stack = (uint32_t)u64_or_0(line, "stack");
		if (c->wait_fd < 0) {
			/* Its would_block was not seen: the close's word is all there is. */
			c->wait_fd = fd;
			c->wait_op = op_static(get_str(line, "op"));
		}
	}
	/* The number may be reused by the next open: forget who waited on this one (the slot
	 * stays, so memory follows the highest fd numbers, not the number of opens). */
	struct an_fd_waiter *w = fd_waiter(a, p, fd, false);
	if (w)
		*w = (struct an_fd_waiter){0};
	return 0;
}

static int on_ready(struct ctp_analysis *a, struct an_process *p, const json_t *line, int fd,
		    uint64_t ts)
{
	struct an_coro *c = waiter_of(a, p, line, fd);
	if (!c)
		return u64_or_0(line, "waiter") ? -1 : 0;
	/* Only a coroutine parked on this fd is owed a resume; readiness of an fd its owner is
	 * busy reading needs none. A named waiter is one the tracer saw waiting (also through a
	 * level-triggered register, which has no EAGAIN); else its EAGAIN on the fd must have
	 * come after its latest resume. */
	bool named = u64_or_0(line, "waiter") != 0;
	if (c->pub.last_resume_ts > ts ||
	    (!named && (c->wait_fd != fd || !c->wait_ts || c->wait_ts < c->pub.last_resume_ts)))
		return 0;
	if (!c->ready_ts || ts < c->ready_ts) {
		c->ready_ts = ts;
		c->ready_fd = fd;
		c->ready_op = c->wait_fd == fd ? c->wait_op : op_static(get_str(line, "op"));
	}
	return 0;
}

static int on_fd(struct ctp_analysis *a, struct an_process *p, const json_t *line)
{
	a->sum.fd_events++;
	p->pub.fd_events++;
	uint64_t ts = u64_or_0(line, "ts"), fd;
	see_ts(a, p, ts);
	const char *event = get_str(line, "event");
	if (!event || !get_u64(line, "fd", &fd) || fd > INT32_MAX)
		return 0;
	if (strcmp(event, "would_block") == 0)
		return on_would_block(a, p, line, (int)fd, ts);
	if (strcmp(event, "close") == 0)
		return on_close(a, p, line, (int)fd, ts);
	if (strcmp(event, "ready") == 0)
		return on_ready(a, p, line, (int)fd, ts);
	return 0; /* register, unregister: not needed by any finding */
}

/* ---- the public calls ---- */

struct ctp_analysis *ctp_analysis_new(const struct ctp_analysis_options *opt)
{
	struct ctp_analysis *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	if (opt)
		a->opt = *opt;
	else
		ctp_analysis_options_default(&a->opt);
	a->sum.missed_after_ns = a->opt.missed_after_ns;
	a->sum.never_yielded_after_ns = a->opt.never_yielded_after_ns;
	a->sum.complete = true;
	return a;
}

int ctp_analysis_add_line(struct ctp_analysis *a, const json_t *line)
{
	a->sum.lines++;
	const char *type = get_str(line, "type");
	if (!type)
		return 0;
	if (strcmp(type, "process") == 0)
		return on_process(a, line);
	if (strcmp(type, "end") == 0) {
		a->sum.has_end = true;
		a->end_ts = u64_or_0(line, "ts");
		see_ts(a, NULL, a->end_ts);
		return 0;
	}
	if (strcmp(type, "trace") == 0)
		return 0;
	uint64_t pid;
	if (!get_u64(line, "pid", &pid) || pid > UINT32_MAX)
		return 0; /* a line of no process: nothing to learn */
	struct an_process *p = process_of(a, line);
	if (!p)
		return -1;
	if (strcmp(type, "switch") == 0)
		return on_switch(a, p, line);
	if (strcmp(type, "fd") == 0)
		return on_fd(a, p, line);
	if (strcmp(type, "coro") == 0)
		return on_coro(a, p, line);
	if (strcmp(type, "stack") == 0)
		return on_stack(a, p, line);
	if (strcmp(type, "state") == 0)
		return on_state(a, p, line);
	if (strcmp(type, "coro_end") == 0)
		return on_coro_end(a, p, line);
	if (strcmp(type, "loss") == 0)
		on_loss(a, p, line);
	else if (strcmp(type, "exit") == 0)
		on_exit_line(a, p, line);
	return 0;
}

uint64_t ctp_an_process_end(const struct ctp_analysis *a, const struct an_process *p)
{
	uint64_t end = p->pub.last_ts;
	if (p->exit_ts > end)
		end = p->exit_ts;
	/* Still running when the trace ended: it ran at least until then. */
	if (p->pub.exit == CTP_ANALYSIS_EXIT_NONE && !p->exec_replaced && a->end_ts > end)
		end = a->end_ts;
	return end;
}

int ctp_analysis_finish(struct ctp_analysis *a, const struct ctp_trace_end *end)
{
	if (a->finished)
		return 0;
	a->finished = true;
	if (end) {
		a->sum.missing_lines = ctp_trace_end_missing(end) + ctp_trace_end_uncounted(end);
		a->sum.complete = end->kind == CTP_TRACE_COMPLETE && a->sum.missing_lines == 0;
		a->sum.bad_lines = end->bad_lines;
		a->sum.lines = end->lines;
	}
	bool uncertain = !a->sum.complete || a->sum.lost > 0;
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].pub.exit == CTP_ANALYSIS_EXIT_NONE && !a->procs[i].exec_replaced)
			uncertain = true;
	a->sum.uncertain = uncertain;
	return ctp_an_find(a);
}

struct ctp_analysis *ctp_analysis_build(struct ctp_trace_reader *r,
					const struct ctp_analysis_options *opt)
{
	struct ctp_analysis *a = ctp_analysis_new(opt);
	if (!a)
		return NULL;
	struct ctp_trace_line line;
	enum ctp_trace_item item;
	while ((item = ctp_trace_reader_next(r, &line)) != CTP_TRACE_END) {
		if (item == CTP_TRACE_LINE && ctp_analysis_add_line(a, line.json) < 0)
			goto fail;
	}
	if (ctp_analysis_finish(a, ctp_trace_reader_end(r)) < 0)
		goto fail;
	return a;
fail:
	ctp_analysis_free(a);
	errno = ENOMEM;
	return NULL;
}

void ctp_analysis_free(struct ctp_analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nprocs; i++) {
		struct an_process *p = &a->procs[i];
		for (size_t k = 0; k < p->pub.argc; k++)
			free(p->argv[k]);
		free(p->argv);
		ctp_amap_free(&p->coros);
		ctp_amap_free(&p->stacks);
		ctp_amap_free(&p->fds);
		free(p->fd_waiters);
	}
	for (size_t i = 0; i < a->nstacks; i++)
		free((void *)a->stacks[i].frames);
	for (size_t i = 0; i < a->nfindings; i++) {
		free((void *)a->findings[i].coros);
		free((void *)a->findings[i].fds);
	}
	free(a->findings);
	free(a->stacks);
	free(a->coros);
	free(a->procs);
	ctp_amap_free(&a->latest_proc);
	ctp_astrings_free(&a->strings);
	free(a);
}

const struct ctp_analysis_summary *ctp_analysis_summary(const struct ctp_analysis *a)
{
	return &a->sum;
}

size_t ctp_analysis_process_count(const struct ctp_analysis *a)
{
	return a->nprocs;
}

const struct ctp_analysis_process *ctp_analysis_process_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->nprocs ? &a->procs[i].pub : NULL;
}

const struct ctp_analysis_process *ctp_analysis_process_find(const struct ctp_analysis *a,
							     uint32_t pid)
{
	uint32_t i;
	return ctp_amap_get(&a->latest_proc, pid, &i) ? &a->procs[i].pub : NULL;
}

const char *ctp_analysis_state_name(enum ctp_analysis_state s)
{
	const char *name = ctp_name_of(&ctp_state_names, s);
	return name ? name : "unknown";
}

size_t ctp_analysis_coro_count(const struct ctp_analysis *a)
{
	return a->ncoros;
}

const struct ctp_analysis_coro *ctp_analysis_coro_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->ncoros ? &a->coros[i].pub : NULL;
}

const struct ctp_analysis_coro *ctp_analysis_coro_find(const struct ctp_analysis *a, uint32_t pid,
						       uint64_t coro)
{
	/* Coroutine ids stay unique within a pid across exec: look through its records, newest
	 * first. */
	for (size_t i = a->nprocs; i-- > 0;) {
		if (a->procs[i].pub.pid != pid)
			continue;
		uint32_t k;
		if (ctp_amap_get(&a->procs[i].coros, coro, &k))
			return &a->coros[k].pub;
	}
	return NULL;
}

const struct ctp_analysis_stack *ctp_analysis_stack_in(const struct ctp_analysis *a, size_t process,
						       uint32_t id)
{
	uint32_t k;
	if (!id || process >= a->nprocs || !ctp_amap_get(&a->procs[process].stacks, id, &k))
		return NULL;
	return &a->stacks[k];
}

const struct ctp_analysis_stack *ctp_analysis_stack_find(const struct ctp_analysis *a, uint32_t pid,
							 uint32_t id)
{
	const struct ctp_analysis_process *p = ctp_analysis_process_find(a, pid);
	return p ? ctp_analysis_stack_in(a, p->index, id) : NULL;
}

size_t ctp_analysis_finding_count(const struct ctp_analysis *a)
{
	return a->nfindings;
}

const struct ctp_finding *ctp_analysis_finding_at(const struct ctp_analysis *a, size_t i)
{
	return i < a->nfindings ? &a->findings[i] : NULL;
}

size_t ctp_analysis_failure_count(const struct ctp_analysis *a)
{
	return a->failures;
}

_Static_assert((int)CTP_ANALYSIS_STATE_CREATED == (int)CTP_STATE_CREATED &&
		       (int)CTP_ANALYSIS_STATE_RUNNING == (int)CTP_STATE_RUNNING &&
		       (int)CTP_ANALYSIS_STATE_SUSPENDED == (int)CTP_STATE_SUSPENDED &&
		       (int)CTP_ANALYSIS_STATE_EXITED == (int)CTP_STATE_EXITED,
	       "analysis states are the contract's");

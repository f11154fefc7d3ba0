/* The view for people: a header line, then the groups, largest first, each with its stack once
 * and one line per coroutine. */
#define _GNU_SOURCE /* sigabbrev_np */
#include <inttypes.h>
#include <string.h>

#include "ctp/cxx_name.h"
#include "ctp/segment.h"
#include "ctp/symbolize.h"
#include "pstack/view.h"

enum { LABEL_FRAMES = 3 }; /* function names in a group's one-line label */

static void put_duration(FILE *f, uint64_t ns)
{
	if (ns < 1000000ull)
		fprintf(f, "%.0f us", (double)ns / 1e3);
	else if (ns < 1000000000ull)
		fprintf(f, "%.1f ms", (double)ns / 1e6);
	else if (ns < 60000000000ull)
		fprintf(f, "%.2f s", (double)ns / 1e9);
	else if (ns < 3600000000000ull)
		fprintf(f, "%um%02us", (unsigned)(ns / 60000000000ull),
			(unsigned)(ns / 1000000000ull % 60));
	else
		fprintf(f, "%uh%02um", (unsigned)(ns / 3600000000000ull),
			(unsigned)(ns / 60000000000ull % 60));
}

/* An address without a name as its place in its module (libfoo.so+0x1a2b, ctp_frame_place). */
static void put_place(struct pstack_view *v, const struct ctp_sym *s, uint64_t addr)
{
	char place[512];
	fputs(ctp_frame_place(place, sizeof(place), s->module, s->module != NULL, s->module_off,
			      addr),
	      v->out);
}

static void put_name(struct pstack_view *v, uint64_t addr, bool return_address)
{
	const struct ctp_sym *s = pstack_symbol(v, addr, return_address);
	if (s->sym)
		ctp_put_cxx_name(v->out, s->sym, v->full_names);
	else
		put_place(v, s, addr);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void put_frame(struct pstack_view *v, uint64_t pc)
{
	const struct ctp_sym *s = pstack_symbol(v, pc, true);
	fputs("      ", v->out);
	if (s->sym) {
		ctp_put_cxx_name(v->out, s->sym, v->full_names);
		fprintf(v->out, "+0x%" PRIx64, s->off);
	} else
		put_place(v, s, pc);
	if (s->file)
		fprintf(v->out, " (%s:%d)", basename_of(s->file), s->line);
	if (s->module && s->sym)
		fprintf(v->out, "  [%s]", basename_of(s->module));
	fputc('\n', v->out);
}

static void put_label(struct pstack_view *v, const struct pstack_group *g)
{
	const char *state = pstack_state_name(g->state);
	fprintf(v->out, "%zu x %s", g->count, state);
	if (g->stack == 0) {
		if (g->state == CTP_STATE_CREATED)
			fputs(", not started yet", v->out);
		else if (g->state == CTP_STATE_SUSPENDED || g->state == CTP_STATE_LEFT)
			fputs(v->snap->stack_depth ? ", no stack recorded"
						   : ", no stack recorded (stack depth 0)",
			      v->out);
		if (g->wait_op != CTP_OP_NONE)
			fprintf(v->out, ", waiting to %s%s", pstack_op_name(g->wait_op),
				g->wait_closed ? " on fds closed since" : "");
		fputc('\n', v->out);
		return;
	}
	uint32_t n;
	const uint64_t *pcs = pstack_stack_frames(v->snap, g->stack, &n, NULL);
	fputs(" in ", v->out);
	for (uint32_t i = 0; i < n && i < LABEL_FRAMES; i++) {
		if (i)
			fputs(" <- ", v->out);
		put_name(v, pcs[i], true);
	}
	if (n > LABEL_FRAMES)
		fputs(" <- ...", v->out);
	if (g->wait_op != CTP_OP_NONE)
		fprintf(v->out, ", waiting to %s%s", pstack_op_name(g->wait_op),
			g->wait_closed ? " on fds closed since" : "");
	fputc('\n', v->out);
	for (uint32_t i = 0; i < n; i++)
		put_frame(v, pcs[i]);
}

static void put_coro(struct pstack_view *v, const struct pstack_coro *c)
{
	FILE *f = v->out;
	fprintf(f, "    #%" PRIu64 " %s", c->coro, pstack_kind_name(c->kind));
	if (c->entry) {
		fputc(' ', f);
		put_name(v, c->entry, false);
	}
	fprintf(f, ", %s ", pstack_state_name(c->state));
	if (v->snap->ns_per_tick > 0) {
		if (c->state == CTP_STATE_RUNNING)
			fputs("for ", f);
		put_duration(f, pstack_ago_ns(v->snap, c->since_raw));
		fputs(c->state == CTP_STATE_RUNNING ? "" : " ago", f);
	}
	fprintf(f, " on thread %" PRIu32, c->tid);
	if (c->wait_fd >= 0)
		fprintf(f, ", waits to %s fd %d%s", pstack_op_name(c->wait_op), c->wait_fd,
			c->wait_closed ? " (closed since)" : "");
	if (c->torn)
		fputs(" [never read consistently: fields may mix two updates]", f);
	fputc('\n', f);
}

/* A core's first line: the file, and what made it. */
static void put_core(struct pstack_view *v)
{
	const struct pstack_core_facts *c = v->core;
	fprintf(v->out, "core %s", c->path);
	if (c->signal) {
		const char *abbrev = sigabbrev_np(c->signal);
		fprintf(v->out, ": killed by SIG%s (signal %d) on thread %" PRIu32 "\n",
			abbrev ? abbrev : "?", c->signal, c->signal_tid);
	} else {
		fputs(": no signal (written by gcore, or by a process that dumped itself)\n",
		      v->out);
	}
	if (v->snap->now_at_latest_switch)
		fputs("note: when the core was written is unknown here (another boot?): times are "
		      "counted back from the latest switch\n",
		      v->out);
}

static void put_header(struct pstack_view *v)
{
	const struct pstack_snapshot *s = v->snap;
	if (v->core)
		put_core(v);
	size_t count[CTP_STATE_LEFT + 1];
	size_t threads = pstack_count_states(s, count);
	size_t coros = s->ncoros - threads;
	fprintf(v->out, "pid %" PRIu32 " (%s): %zu coroutine%s", s->pid, v->command, coros,
		coros == 1 ? "" : "s");
	const char *sep = ": ";
	for (uint32_t st = CTP_STATE_CREATED; st <= CTP_STATE_LEFT; st++) {
		if (st == CTP_STATE_EXITED || !count[st])
			continue;
		fprintf(v->out, "%s%zu %s", sep, count[st], pstack_state_name(st));
		sep = ", ";
	}
	fprintf(v->out, "; %zu thread%s\n", threads, threads == 1 ? "" : "s");
	if (s->torn)
		fprintf(v->out, "warning: %zu stations never read consistently\n", s->torn);
	if (s->stations_lost)
		fprintf(v->out, "warning: %" PRIu64 " coroutines are not traced (no station)\n",
			s->stations_lost);
}

void pstack_write_text(struct pstack_view *v)
{
	put_header(v);
	for (size_t i = 0; i < v->groups->ngroups; i++) {
		const struct pstack_group *g = &v->groups->groups[i];
		fputc('\n', v->out);
		put_label(v, g);
		for (size_t k = 0; k < g->count; k++)
			put_coro(v, &v->snap->coros[v->groups->members[g->first + k]]);
	}
}

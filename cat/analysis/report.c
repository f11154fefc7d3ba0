/* `ctp-cat --report` for people: what the trace holds, how far it can be trusted, then the
 * findings, most important first, each with the stacks that say where to look. Lost wakeups
 * that share their suspend and close stacks are one story and are told once. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cat/analysis/report.h"
#include "ctp/symbolize.h"
#include "ctp/cxx_name.h"

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* Frames shown per stack; the innermost ones say where, the rest is usually the scheduler. */
#define FRAMES_SHOWN 8
/* Members of a group named one by one before "and N more". */
#define MEMBERS_SHOWN 12

static void print_duration(FILE *f, uint64_t ns)
{
	if (ns >= 10 * CTP_NS_PER_SEC)
		fprintf(f, "%.0f s", (double)ns / 1e9);
	else if (ns >= CTP_NS_PER_SEC)
		fprintf(f, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		fprintf(f, "%.0f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		fprintf(f, "%.0f us", (double)ns / 1e3);
	else
		fprintf(f, "%" PRIu64 " ns", ns);
}

static const char *base_name(const char *path)
{
	if (!path)
		return "?";
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* --full-names; one report is written at a time, by one thread. */
static bool full_names;

static void print_frame(FILE *f, const struct ctp_analysis_frame *fr)
{
	char place[512];
	if (fr->sym)
		ctp_put_cxx_name(f, fr->sym, full_names);
	else
		fputs(ctp_frame_place(place, sizeof(place), fr->module, fr->has_module_off,
				      fr->module_off, fr->addr),
		      f);
	if (fr->file && fr->line)
		fprintf(f, " (%s:%d)", base_name(fr->file), fr->line);
	else if (fr->module && (fr->sym || !fr->has_module_off))
		fprintf(f, " (%s)", base_name(fr->module));
	fputc('\n', f);
}

static void print_stack(FILE *f, const struct ctp_analysis *a, size_t process, uint32_t id,
			const char *indent)
{
	const struct ctp_analysis_stack *s = ctp_analysis_stack_in(a, process, id);
	if (!s || !s->nframes) {
		fprintf(f, "%s(stack not recorded)\n", indent);
		return;
	}
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < s->nframes; i++) {
		if (!ctp_cat_report_shows_frame(s, i))
			continue;
		if (shown == FRAMES_SHOWN) {
			more++;
			continue;
		}
		fputs(indent, f);
		print_frame(f, &s->frames[i]);
		shown++;
	}
	if (more)
		fprintf(f, "%s... %zu more frame%s\n", indent, more, plural(more));
}

static void print_coro(FILE *f, const struct ctp_analysis *a, uint32_t pid, uint64_t id)
{
	const struct ctp_analysis_coro *c = ctp_analysis_coro_find(a, pid, id);
	fprintf(f, "coroutine #%" PRIu64, id);
	if (c && c->entry) {
		fputs(" (", f);
		ctp_put_cxx_name(f, c->entry, full_names);
		fputc(')', f);
	} else if (c && c->kind && strcmp(c->kind, "thread") == 0)
		fputs(" (a thread's own stack)", f);
}

static void print_process(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	const struct ctp_analysis_process *p = ctp_analysis_process_at(a, fi->process);
	fprintf(f, "pid %" PRIu32 " (%s)", fi->pid, base_name(p ? p->exe : NULL));
}

static void print_uncertain(FILE *f, const struct ctp_finding *fi)
{
	if (fi->uncertain)
		fputs("  (uncertain: events of this process were lost or its end was not seen)\n",
		      f);
}

/* ---- the summary ---- */

static void print_summary(FILE *f, const struct ctp_analysis *a, const char *name)
{
	const struct ctp_analysis_summary *s = ctp_analysis_summary(a);
	fprintf(f, "ctp report: %s\n", name);
	fprintf(f,
		"  %" PRIu64 " process%s (%" PRIu64 " ended, %" PRIu64 " by a signal), %" PRIu64
		" coroutine%s and %" PRIu64 " thread%s, %" PRIu64 " switch%s, %" PRIu64
		" fd event%s, %" PRIu64 " event%s lost",
		s->processes, s->processes == 1 ? "" : "es", s->processes_ended, s->crashed,
		s->coroutines - s->threads, plural(s->coroutines - s->threads), s->threads,
		plural(s->threads), s->switches, s->switches == 1 ? "" : "es", s->fd_events,
		plural(s->fd_events), s->lost, plural(s->lost));
	if (s->last_ts > s->first_ts) {
		fputs(", ", f);
		print_duration(f, s->last_ts - s->first_ts);
		fputs(" traced", f);
	}
	fputs(".\n", f);
	if (s->lost)
		fprintf(f,
			"  WARNING: %" PRIu64 " %s lost (the tracer's rings were full): "
			"switches or fd events may be missing, so findings may be missing or "
			"wrong.\n",
			s->lost, s->lost == 1 ? "event was" : "events were");
	if (s->missing_lines)
		fprintf(f,
			"  WARNING: the collector could not write %" PRIu64
			" trace lines (a write error: full disk?): switches, fd events or ends may "
			"be "
			"missing, so findings may be missing or wrong.\n",
			s->missing_lines);
	else if (s->live)
		fputs("  The trace is still being written: coroutines that look stuck may be "
		      "resumed "
		      "later, unless a snapshot is their process's last word.\n",
		      f);
	else if (!s->complete)
		fputs("  WARNING: the trace is incomplete (cut off or damaged): its end is "
		      "missing, "
		      "so coroutines that look stuck may have been resumed later.\n",
		      f);
	for (size_t i = 0; i < ctp_analysis_process_count(a); i++) {
		const struct ctp_analysis_process *p = ctp_analysis_process_at(a, i);
		/* Replaced by an exec: a later record of its pid, maybe after those of children it
		 * started before the exec. */
		if (p->exit == CTP_ANALYSIS_EXIT_NONE && ctp_analysis_process_find(a, p->pid) != p)
			continue;
		if (p->exit == CTP_ANALYSIS_EXIT_SNAPSHOT)
			fprintf(f,
				"  pid %" PRIu32
				" (%s) was running: a live snapshot gives its coroutines' "
				"states, exact at that moment.\n",
				p->pid, base_name(p->exe));
		if (p->exit == CTP_ANALYSIS_EXIT_NONE)
			fprintf(f,
				"  WARNING: pid %" PRIu32 " (%s) has no exit: it was still running "
				"when the trace ended, or its end was lost; its findings are "
				"provisional.\n",
				p->pid, base_name(p->exe));
	}
	if (s->idle)
		fprintf(f,
			"  %" PRIu64
			" coroutine%s idle at the end: waiting in %s runtime for new work "
			"(pooled, or a helper that runs after coroutines end), not stuck nor "
			"leaked.\n",
			s->idle, plural(s->idle), s->idle == 1 ? "its" : "their");
	fprintf(f, "  thresholds: missed readiness after ");
	print_duration(f, s->missed_after_ns);
	fputs(", never yielded after ", f);
	print_duration(f, s->never_yielded_after_ns);
	fputs(".\n", f);
}

/* ---- each kind ---- */

static void print_crash(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	fputs("CRASH: ", f);
	print_process(f, a, fi);
	fprintf(f, " died of signal %d (%s)", fi->signal, ctp_cat_report_signal_name(fi->signal));
	if (fi->addr)
		fprintf(f, ", fault address 0x%" PRIx64, fi->addr);
	fputs(".\n", f);
	if (fi->coro) {
		fputs("  running ", f);
		print_coro(f, a, fi->pid, fi->coro);
		if (fi->tid)
			fprintf(f, " on thread %" PRIu32, fi->tid);
		fputs(".\n", f);
	} else if (fi->tid) {
		fprintf(f, "  on thread %" PRIu32 " (which coroutine is not known).\n", fi->tid);
	}
	if (fi->stack) {
		fputs("  where it died:\n", f);
		print_stack(f, a, fi->process, fi->stack, "    ");
	}
	const struct ctp_analysis_coro *c =
		fi->coro ? ctp_analysis_coro_find(a, fi->pid, fi->coro) : NULL;
	if (c && c->create_stack) {
		fputs("  the coroutine was created at:\n", f);
		print_stack(f, a, fi->process, c->create_stack, "    ");
	}
}

/* The lost wakeups of one incident, from fi[0] on; returns how many it printed. */
static size_t print_lost_wakeups(FILE *f, const struct ctp_analysis *a,
				 const struct ctp_finding *fi, size_t left)
{
	size_t n = 1;
	while (n < left && fi[n].incident == fi->incident)
		n++;
	fputs("LOST WAKEUP: ", f);
	if (n == 1) {
		print_coro(f, a, fi->pid, fi->coro);
		fputs(" in ", f);
		print_process(f, a, fi);
		fprintf(f,
			" waits forever on fd %d (%s): the fd was closed while it waited, and it "
			"was never resumed.\n",
			fi->fd, fi->op ? fi->op : "?");
	} else {
		fprintf(f, "%zu coroutines in ", n);
		print_process(f, a, fi);
		fprintf(f,
			" wait forever (%s): their fds were closed while they waited, and "
			"they were never resumed.\n",
			fi->op ? fi->op : "?");
		fputs("  coroutine/fd:", f);
		for (size_t i = 0; i < n && i < MEMBERS_SHOWN; i++)
			fprintf(f, " #%" PRIu64 "/%d", fi[i].coro, fi[i].fd);
		if (n > MEMBERS_SHOWN)
			fprintf(f, " and %zu more", n - MEMBERS_SHOWN);
		fputc('\n', f);
	}
	uint64_t longest = 0;
	for (size_t i = 0; i < n; i++)
		if (fi[i].duration_ns > longest)
			longest = fi[i].duration_ns;
	fputs("  suspended for up to ", f);
	print_duration(f, longest);
	fputs(" before the end, waiting at:\n", f);
	print_stack(f, a, fi->process, fi->stack, "    ");
	if (fi->close_ts) {
		fputs(n == 1 ? "  the fd was closed by " : "  the fds were closed by ", f);
		if (fi->close_coro)
			print_coro(f, a, fi->pid, fi->close_coro);
		else
			fputs("an unknown coroutine", f);
		if (fi->close_tid)
			fprintf(f, " on thread %" PRIu32, fi->close_tid);
		fputs(", at:\n", f);
		print_stack(f, a, fi->process, fi->close_stack, "    ");
	} else {
		fputs("  (the close itself was not recorded; the tracer saw the fd closed)\n", f);
	}
	fputs("  fix: wake (resume with an error) the coroutine waiting on an fd before or when "
	      "closing it.\n",
	      f);
	print_uncertain(f, fi);
	return n;
}

static void print_missed(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	fputs("MISSED READINESS: ", f);
	print_coro(f, a, fi->pid, fi->coro);
	fputs(" in ", f);
	print_process(f, a, fi);
	fprintf(f, ": fd %d (%s) was reported ready and ", fi->fd, fi->op ? fi->op : "?");
	if (fi->at_end) {
		fputs("it was not resumed by the end (", f);
		print_duration(f, fi->duration_ns);
		fputs(" later).\n", f);
	} else {
		fputs("it was resumed only ", f);
		print_duration(f, fi->duration_ns);
		fputs(" later.\n", f);
	}
	fputs("  waiting at:\n", f);
	print_stack(f, a, fi->process, fi->stack, "    ");
	print_uncertain(f, fi);
}

static void print_stuck(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	fprintf(f, "STUCK: %zu coroutine%s in ", fi->count, plural(fi->count));
	print_process(f, a, fi);
	fputs(" suspended at the end, for up to ", f);
	print_duration(f, fi->duration_ns);
	bool fds = false;
	for (size_t i = 0; i < fi->count; i++)
		fds |= fi->fds[i] >= 0;
	fputs(fds ? ".\n  coroutine/fd:" : ".\n  coroutines:", f);
	for (size_t i = 0; i < fi->count && i < MEMBERS_SHOWN; i++) {
		fprintf(f, " #%" PRIu64, fi->coros[i]);
		if (fi->fds[i] >= 0)
			fprintf(f, "/%d", fi->fds[i]);
	}
	if (fi->count > MEMBERS_SHOWN)
		fprintf(f, " and %zu more", fi->count - MEMBERS_SHOWN);
	fputs("\n  waiting at:\n", f);
	print_stack(f, a, fi->process, fi->stack, "    ");
	print_uncertain(f, fi);
}

static void print_never_yielded(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	fputs("NEVER YIELDED: ", f);
	print_coro(f, a, fi->pid, fi->coro);
	fputs(" in ", f);
	print_process(f, a, fi);
	fputs(" ran ", f);
	print_duration(f, fi->duration_ns);
	fputs(" without switching", f);
	if (fi->tid)
		fprintf(f, " on thread %" PRIu32, fi->tid);
	if (fi->at_end) {
		fputs(", and was still running at the end.\n", f);
	} else {
		fputs("; it switched away at last at:\n", f);
		print_stack(f, a, fi->process, fi->stack, "    ");
	}
	fputs("  every other coroutine of that thread waited meanwhile: yield in long loops, or "
	      "move blocking work off the scheduler's threads.\n",
	      f);
	print_uncertain(f, fi);
}

static void print_leak(FILE *f, const struct ctp_analysis *a, const struct ctp_finding *fi)
{
	fprintf(f, "LEAK: %zu coroutine%s in ", fi->count, plural(fi->count));
	print_process(f, a, fi);
	fputs(" created and never ended", f);
	const struct ctp_analysis_coro *c = ctp_analysis_coro_find(a, fi->pid, fi->coros[0]);
	if (c && c->entry) {
		fputs(" (entry ", f);
		ctp_put_cxx_name(f, c->entry, full_names);
		fputc(')', f);
	}
	fputs(":", f);
	for (size_t i = 0; i < fi->count && i < MEMBERS_SHOWN; i++)
		fprintf(f, " #%" PRIu64, fi->coros[i]);
	if (fi->count > MEMBERS_SHOWN)
		fprintf(f, " and %zu more", fi->count - MEMBERS_SHOWN);
	fputs("\n  created at:\n", f);
	print_stack(f, a, fi->process, fi->stack, "    ");
	print_uncertain(f, fi);
}

int ctp_cat_report_text(FILE *f, const struct ctp_analysis *a, const char *name, bool full)
{
	full_names = full;
	print_summary(f, a, name);
	size_t n = ctp_analysis_finding_count(a);
	size_t counts[CTP_FINDING_KIND_COUNT];
	ctp_analysis_count_incidents(a, counts);
	if (!n) {
		fputs("\nNo findings: no crash, lost wakeup, missed readiness, stuck, hogging or "
		      "leaked coroutine.\n",
		      f);
		return fflush(f) == 0 ? 0 : -1;
	}
	/* Incidents, and how many coroutines they hold where that differs. */
	size_t coros[CTP_FINDING_KIND_COUNT] = {0};
	for (size_t i = 0; i < n; i++) {
		const struct ctp_finding *fi = ctp_analysis_finding_at(a, i);
		coros[fi->kind] += fi->count ? fi->count : 1;
	}
	fputs("\nFindings:", f);
	const char *sep = " ";
	for (int k = 0; k < CTP_FINDING_KIND_COUNT; k++) {
		if (!counts[k])
			continue;
		fprintf(f, "%s%zu %s", sep, counts[k], ctp_finding_kind_name(k));
		if (coros[k] != counts[k] && k != CTP_FINDING_CRASH)
			fprintf(f, " (%zu coroutines)", coros[k]);
		sep = ", ";
	}
	fputs("\n", f);
	for (size_t i = 0; i < n;) {
		const struct ctp_finding *fi = ctp_analysis_finding_at(a, i);
		fputc('\n', f);
		switch (fi->kind) {
		case CTP_FINDING_LOST_WAKEUP:
			i += print_lost_wakeups(f, a, fi, n - i);
			continue;
		case CTP_FINDING_CRASH:
			print_crash(f, a, fi);
			break;
		case CTP_FINDING_MISSED_READINESS:
			print_missed(f, a, fi);
			break;
		case CTP_FINDING_STUCK:
			print_stuck(f, a, fi);
			break;
		case CTP_FINDING_NEVER_YIELDED:
			print_never_yielded(f, a, fi);
			break;
		case CTP_FINDING_LEAK:
			print_leak(f, a, fi);
			break;
		}
		i++;
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

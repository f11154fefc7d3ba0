/* The report's analysis (cat/analysis/analysis.h) on small hand-built traces: a coroutine stranded
 * on an fd that was closed while it waited is a lost wakeup, found from the station's word and from
 * the events alone, with the close that stranded it; a healthy exchange, a coroutine woken
 * after the close, and a close from before the wait give no such finding; loss makes findings
 * uncertain; a switch between two coroutines never announced is recorded for both, however the
 * table of coroutines grows. docs/report.md defines the findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cat/analysis/analysis.h"

#define S 1000000000ull /* one second in ns */

/* Feeds one line, written printf-style. */
static struct ctp_event_decoder decoder;

__attribute__((format(printf, 2, 3))) static void line(struct ctp_analysis *a, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);
	if (!j)
		fail_msg("bad test line: %s: %s", err.text, text);
	/* As ctp-cat feeds it: the line decoded once, a derived end (format 1) first. */
	struct ctp_trace_line tl = {.text = text, .len = (size_t)n, .json = j};
	struct ctp_event ev;
	assert_int_equal(ctp_event_decode(&decoder, &tl, &ev), 0);
	const struct ctp_event *derived = ctp_event_derived(&decoder);
	if (derived)
		assert_int_equal(ctp_analysis_add_event(a, derived), 0);
	assert_int_equal(ctp_analysis_add_event(a, &ev), 0);
	json_decref(j);
}

/* A new analysis, and a new decoder for its trace. */
static struct ctp_analysis *new_analysis(void)
{
	ctp_event_decoder_free(&decoder);
	ctp_event_decoder_init(&decoder);
	return ctp_analysis_new(NULL);
}

/* A process (pid 7) with its thread (coroutine 1) and a coroutine 2 that reads fd 5: it runs,
 * gets EAGAIN, suspends, at 1 s + 300 ns. */
static struct ctp_analysis *start(void)
{
	struct ctp_analysis *a = new_analysis();
	assert_non_null(a);
	line(a,
	     "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":1,\"tool\":\"t\","
	     "\"start\":%llu}",
	     S);
	line(a,
	     "{\"type\":\"process\",\"pid\":7,\"ppid\":1,\"exe\":\"/bin/srv\",\"argv\":[\"srv\"]}");
	line(a,
	     "{\"type\":\"stack\",\"pid\":7,\"id\":1,\"frames\":[{\"addr\":\"0x1000\",\"sym\":"
	     "\"wait_readable\",\"off\":4,\"module\":\"/bin/srv\",\"file\":null,\"line\":null}]}");
	line(a, "{\"type\":\"stack\",\"pid\":7,\"id\":2,\"frames\":[{\"addr\":\"0x2000\",\"sym\":"
		"\"drop_connection\",\"off\":8,\"module\":\"/bin/"
		"srv\",\"file\":null,\"line\":null}]}");
	line(a,
	     "{\"type\":\"coro\",\"pid\":7,\"coro\":1,\"kind\":\"thread\",\"entry\":null,"
	     "\"entry_addr\":null,\"parent\":null,\"tid\":7,\"ts\":%llu,\"stack\":null}",
	     S);
	line(a,
	     "{\"type\":\"coro\",\"pid\":7,\"coro\":2,\"kind\":\"ucontext\",\"entry\":\"reader\","
	     "\"entry_addr\":\"0x3000\",\"parent\":1,\"tid\":7,\"ts\":%llu,\"stack\":null}",
	     S);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":1,\"to\":2,"
	     "\"how\":\"swapcontext\",\"stack\":null}",
	     S + 100);
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":2,\"fd\":5,"
	     "\"event\":\"would_block\",\"op\":\"read\",\"waiter\":null,\"stack\":1}",
	     S + 200);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":2,\"to\":1,"
	     "\"how\":\"swapcontext\",\"stack\":1}",
	     S + 300);
	return a;
}

/* The thread closes fd 5 while coroutine 2 waits on it. */
static void close_fd5(struct ctp_analysis *a, const char *waiter)
{
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":1,\"fd\":5,"
	     "\"event\":\"close\",\"op\":null,\"waiter\":%s,\"stack\":2}",
	     S + 400, waiter);
}

static void end(struct ctp_analysis *a, bool with_states, bool suspended)
{
	if (with_states) {
		line(a,
		     "{\"type\":\"state\",\"pid\":7,\"coro\":1,\"state\":\"running\",\"tid\":7,"
		     "\"since\":%llu,\"stack\":null,\"switches\":2}",
		     S + 300);
		if (suspended)
			line(a,
			     "{\"type\":\"state\",\"pid\":7,\"coro\":2,\"state\":\"suspended\","
			     "\"tid\":7,\"since\":%llu,\"stack\":1,\"switches\":1,\"wait\":{\"fd\":"
			     "5,"
			     "\"op\":\"read\",\"closed\":true}}",
			     S + 300);
		else
			line(a,
			     "{\"type\":\"state\",\"pid\":7,\"coro\":2,\"state\":\"exited\","
			     "\"tid\":7,\"since\":%llu,\"stack\":null,\"switches\":2}",
			     S + 600);
	}
	line(a, "{\"type\":\"exit\",\"pid\":7,\"status\":0,\"ts\":%llu}", 3 * S);
	line(a, "{\"type\":\"end\",\"lines\":20,\"lost\":0}");
	assert_int_equal(ctp_analysis_finish(a, NULL), 0);
}

static size_t count_kind(const struct ctp_analysis *a, enum ctp_finding_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < ctp_analysis_finding_count(a); i++)
		n += ctp_analysis_finding_at(a, i)->kind == kind;
	return n;
}

static const struct ctp_finding *first_of(const struct ctp_analysis *a, enum ctp_finding_kind kind)
{
	for (size_t i = 0; i < ctp_analysis_finding_count(a); i++)
		if (ctp_analysis_finding_at(a, i)->kind == kind)
			return ctp_analysis_finding_at(a, i);
	fail_msg("no finding of kind %s", ctp_finding_kind_name(kind));
	return NULL;
}

static void check_lost_wakeup(const struct ctp_analysis *a)
{
	assert_int_equal(count_kind(a, CTP_FINDING_LOST_WAKEUP), 1);
	assert_int_equal(ctp_analysis_failure_count(a), 1);
	const struct ctp_finding *f = first_of(a, CTP_FINDING_LOST_WAKEUP);
	assert_ptr_equal(f, ctp_analysis_finding_at(a, 0)); /* the most important first */
	assert_int_equal(f->pid, 7);
	assert_int_equal(f->coro, 2);
	assert_int_equal(f->fd, 5);
	assert_non_null(f->op);
	assert_string_equal(f->op, "read");
	assert_int_equal(f->stack, 1); /* where it suspended: wait_readable */
	assert_int_equal(f->ts, S + 300);
	assert_int_equal(f->duration_ns, 3 * S - (S + 300));
	assert_true(f->at_end);
	assert_int_equal(f->close_ts, S + 400);
	assert_int_equal(f->close_coro, 1);
	assert_int_equal(f->close_tid, 7);
	assert_int_equal(f->close_stack, 2); /* drop_connection */
	assert_false(f->uncertain);
	const struct ctp_analysis_stack *st = ctp_analysis_stack_find(a, 7, f->close_stack);
	assert_non_null(st);
	assert_int_equal(st->nframes, 1);
	assert_string_equal(st->frames[0].sym, "drop_connection");
	assert_int_equal(count_kind(a, CTP_FINDING_MISSED_READINESS), 0);
}

/* The close names its waiter, and the final state says the fd was closed under it. */
static void lost_wakeup_found(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	close_fd5(a, "2");
	end(a, true, true);
	check_lost_wakeup(a);
	const struct ctp_analysis_summary *s = ctp_analysis_summary(a);
	assert_true(s->complete);
	assert_false(s->uncertain);
	assert_int_equal(s->switches, 2);
	assert_int_equal(s->fd_events, 2);
	assert_int_equal(s->coroutines, 2);
	const struct ctp_analysis_coro *c = ctp_analysis_coro_find(a, 7, 2);
	assert_non_null(c);
	assert_int_equal(c->state, CTP_ANALYSIS_STATE_SUSPENDED);
	assert_int_equal(c->wait_fd, 5);
	assert_int_equal(c->wait_closed, 1);
	ctp_analysis_free(a);
}

/* No state lines, and a close that names no waiter: the last EAGAIN on the fd says who waited. */
static void lost_wakeup_found_from_events_alone(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	close_fd5(a, "null");
	end(a, false, true);
	check_lost_wakeup(a);
	ctp_analysis_free(a);
}

/* Readiness, then the waiter is resumed and finishes: nothing to report at all. */
static void healthy_exchange_finds_nothing(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":1,\"fd\":5,"
	     "\"event\":\"ready\",\"op\":null,\"waiter\":2,\"stack\":null}",
	     S + 400);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":1,\"to\":2,"
	     "\"how\":\"swapcontext\",\"stack\":null}",
	     S + 500);
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":2,\"fd\":5,"
	     "\"event\":\"close\",\"op\":null,\"waiter\":null,\"stack\":null}",
	     S + 550);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":2,\"to\":1,"
	     "\"how\":\"return\",\"stack\":null}",
	     S + 600);
	end(a, true, false);
	assert_int_equal(ctp_analysis_finding_count(a), 0);
	assert_int_equal(ctp_analysis_failure_count(a), 0);
	const struct ctp_analysis_coro *c = ctp_analysis_coro_find(a, 7, 2);
	assert_non_null(c);
	assert_true(c->ended);
	assert_int_equal(c->resumes, 2);
	ctp_analysis_free(a);
}

/* The close strands it, but the scheduler resumes it afterwards (with an error, say): woken. */
static void woken_after_the_close_is_no_lost_wakeup(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	close_fd5(a, "2");
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":1,\"to\":2,"
	     "\"how\":\"swapcontext\",\"stack\":null}",
	     S + 500);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":2,\"to\":1,"
	     "\"how\":\"return\",\"stack\":null}",
	     S + 600);
	end(a, true, false);
	assert_int_equal(count_kind(a, CTP_FINDING_LOST_WAKEUP), 0);
	assert_int_equal(ctp_analysis_failure_count(a), 0);
	ctp_analysis_free(a);
}

/* fd 5 was closed before coroutine 2 began to wait on a new fd 5 (numbers are reused): that
 * close stranded nobody. It is still waiting at the end, which is "stuck", not a failure. */
static void a_close_before_the_wait_is_not_blamed(void **state)
{
	(void)state;
	struct ctp_analysis *a = new_analysis();
	assert_non_null(a);
	line(a,
	     "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":1,\"tool\":\"t\","
	     "\"start\":%llu}",
	     S);
	line(a,
	     "{\"type\":\"process\",\"pid\":7,\"ppid\":1,\"exe\":\"/bin/srv\",\"argv\":[\"srv\"]}");
	line(a,
	     "{\"type\":\"coro\",\"pid\":7,\"coro\":1,\"kind\":\"thread\",\"entry\":null,"
	     "\"entry_addr\":null,\"parent\":null,\"tid\":7,\"ts\":%llu,\"stack\":null}",
	     S);
	line(a,
	     "{\"type\":\"coro\",\"pid\":7,\"coro\":2,\"kind\":\"ucontext\",\"entry\":\"reader\","
	     "\"entry_addr\":\"0x3000\",\"parent\":1,\"tid\":7,\"ts\":%llu,\"stack\":null}",
	     S);
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":1,\"fd\":5,"
	     "\"event\":\"close\",\"op\":null,\"waiter\":null,\"stack\":null}",
	     S + 50);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":1,\"to\":2,"
	     "\"how\":\"swapcontext\",\"stack\":null}",
	     S + 100);
	line(a,
	     "{\"type\":\"fd\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"coro\":2,\"fd\":5,"
	     "\"event\":\"would_block\",\"op\":\"read\",\"waiter\":null,\"stack\":null}",
	     S + 200);
	line(a,
	     "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":%llu,\"from\":2,\"to\":1,"
	     "\"how\":\"swapcontext\",\"stack\":null}",
	     S + 300);
	end(a, false, true);
	assert_int_equal(count_kind(a, CTP_FINDING_LOST_WAKEUP), 0);
	assert_int_equal(ctp_analysis_failure_count(a), 0);
	assert_int_equal(count_kind(a, CTP_FINDING_STUCK), 1);
	const struct ctp_finding *f = first_of(a, CTP_FINDING_STUCK);
	assert_int_equal(f->count, 1);
	assert_int_equal(f->coros[0], 2);
	assert_int_equal(f->fds[0], 5);
	ctp_analysis_free(a);
}

/* Lost events may hide the resume that would have woken it: the finding stands, uncertain. */
/* ctp-cat --follow --report: findings judged so far, again at a snapshot, then at the end; each
 * judgement replaces the last, and the model goes on from where it was. */
static void judged_so_far_then_at_a_snapshot_then_finished(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	close_fd5(a, "2");
	assert_int_equal(ctp_analysis_judge_so_far(a), 0);
	assert_int_equal(count_kind(a, CTP_FINDING_LOST_WAKEUP), 1);
	assert_true(first_of(a, CTP_FINDING_LOST_WAKEUP)->uncertain); /* no end, no snapshot */
	assert_false(ctp_analysis_summary(a)->complete);
	line(a, "{\"type\":\"snapshot\",\"pid\":7,\"ts\":%llu,\"states\":2}", S + 500);
	line(a,
	     "{\"type\":\"state\",\"pid\":7,\"coro\":1,\"state\":\"running\",\"tid\":7,"
	     "\"since\":%llu,\"stack\":null,\"switches\":2}",
	     S + 300);
	line(a,
	     "{\"type\":\"state\",\"pid\":7,\"coro\":2,\"state\":\"suspended\",\"tid\":7,"
	     "\"since\":%llu,\"stack\":1,\"switches\":1,\"wait\":{\"fd\":5,\"op\":\"read\","
	     "\"closed\":true}}",
	     S + 300);
	assert_int_equal(ctp_analysis_judge_so_far(a), 0);
	assert_int_equal(ctp_analysis_finding_count(a), 1);
	assert_int_equal(ctp_analysis_failure_count(a), 1);
	assert_false(first_of(a, CTP_FINDING_LOST_WAKEUP)->uncertain); /* the snapshot's word */
	assert_false(ctp_analysis_summary(a)->uncertain);
	end(a, true, true);
	check_lost_wakeup(a);
	assert_int_equal(ctp_analysis_finding_count(a), 1);
	assert_true(ctp_analysis_summary(a)->complete);
	/* Finished: no judgement replaces the final findings. */
	assert_int_equal(ctp_analysis_judge_so_far(a), 0);
	assert_true(ctp_analysis_summary(a)->complete);
	ctp_analysis_free(a);
}

static void loss_makes_it_uncertain(void **state)
{
	(void)state;
	struct ctp_analysis *a = start();
	close_fd5(a, "2");
	line(a, "{\"type\":\"loss\",\"pid\":7,\"tid\":7,\"count\":3}");
	end(a, true, true);
	assert_int_equal(count_kind(a, CTP_FINDING_LOST_WAKEUP), 1);
	assert_true(first_of(a, CTP_FINDING_LOST_WAKEUP)->uncertain);
	assert_true(ctp_analysis_summary(a)->uncertain);
	assert_int_equal(ctp_analysis_summary(a)->lost, 3);
	ctp_analysis_free(a);
}

/* A switch that names two coroutines never announced (their coro lines lost) when the table of
 * coroutines is full: making the second grows it, and what is recorded of the first (its
 * suspend) must land in the table as it is afterwards, not in the one it left. */
static void a_switch_between_two_new_coroutines_when_the_table_grows(void **state)
{
	(void)state;
	struct ctp_analysis *a = new_analysis();
	assert_non_null(a);
	line(a, "{\"type\":\"trace\",\"format\":\"ctp-trace\",\"version\":2,\"tool\":\"t\","
		"\"start\":1}");
	line(a,
	     "{\"type\":\"process\",\"pid\":7,\"ppid\":1,\"exe\":\"/bin/srv\",\"argv\":[\"srv\"]}");
	/* The table starts with room for 16: 15 announced, the first named by the switch fills
	 * it, the second grows it. */
	for (int id = 1; id <= 15; id++)
		line(a,
		     "{\"type\":\"coro\",\"pid\":7,\"coro\":%d,\"kind\":\"ucontext\",\"entry\":"
		     "null,"
		     "\"entry_addr\":null,\"parent\":null,\"tid\":7,\"ts\":%d,\"stack\":null}",
		     id, id);
	assert_int_equal(ctp_analysis_coro_count(a), 15);
	line(a, "{\"type\":\"switch\",\"pid\":7,\"tid\":7,\"ts\":500,\"from\":100,\"to\":101,"
		"\"how\":\"swapcontext\",\"stack\":null}");
	const struct ctp_analysis_coro *from = ctp_analysis_coro_find(a, 7, 100);
	const struct ctp_analysis_coro *to = ctp_analysis_coro_find(a, 7, 101);
	assert_non_null(from);
	assert_non_null(to);
	assert_int_equal(from->last_suspend_ts, 500);
	assert_int_equal(to->last_resume_ts, 500);
	assert_int_equal(to->resumes, 1);
	ctp_analysis_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lost_wakeup_found),
		cmocka_unit_test(lost_wakeup_found_from_events_alone),
		cmocka_unit_test(healthy_exchange_finds_nothing),
		cmocka_unit_test(woken_after_the_close_is_no_lost_wakeup),
		cmocka_unit_test(a_close_before_the_wait_is_not_blamed),
		cmocka_unit_test(loss_makes_it_uncertain),
		cmocka_unit_test(judged_so_far_then_at_a_snapshot_then_finished),
		cmocka_unit_test(a_switch_between_two_new_coroutines_when_the_table_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

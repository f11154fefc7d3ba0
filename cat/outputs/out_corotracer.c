/* coroTracer's JSON Lines record shape, so that its tools can read a ctp trace:
 *   {"probe_id":u64,"tid":u64,"addr":"0x%016x","seq":u64,"is_active":bool,"ts":u64}
 * Each switch becomes two records at its time: `from` suspends (is_active false), then `to`
 * resumes (is_active true). probe_id is the coroutine id, addr its entry function's address
 * (zero for a thread's own stack, which has none), seq counts the records of each probe from 0.
 * coroTracer knows one process: a trace of several processes mixes their probe ids, which is
 * said once on stderr (--pid picks one). Each probe's count is kept with its name (names.h),
 * so it is forgotten with it at its process's exit: memory follows the live processes, and a
 * later process given the same pid counts from 0. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/model/names.h"
#include "cat/outputs/view.h"
#include "ctp/jsonw.h"

struct out_corotracer {
	struct ctp_cat_view v; /* its names count each probe's records */
	struct ctp_jsonw w;
	uint32_t first_pid;
	bool have_pid, warned;
};

/* The probe's next seq; UINT64_MAX when out of memory. */
static uint64_t next_seq(struct out_corotracer *o, uint32_t pid, uint64_t coro)
{
	uint64_t *count = ctp_cat_names_count(o->v.names, pid, coro);
	return count ? (*count)++ : UINT64_MAX;
}

static uint64_t probe_addr(struct out_corotracer *o, uint32_t pid, uint64_t coro)
{
	const struct ctp_cat_coro_name *c = ctp_cat_names_coro_info(o->v.names, pid, coro);
	return c ? c->entry_addr : 0;
}

static int put_record(struct out_corotracer *o, uint32_t pid, uint64_t coro, uint32_t tid,
		      bool active, uint64_t ts)
{
	struct ctp_jsonw *w = &o->w;
	uint64_t seq = next_seq(o, pid, coro);
	if (seq == UINT64_MAX)
		return -1;
	char addr[24];
	snprintf(addr, sizeof(addr), "0x%016" PRIx64, probe_addr(o, pid, coro));
	CTP_JSONW_LIT(w, "{\"probe_id\":");
	ctp_jsonw_u64(w, coro);
	CTP_JSONW_LIT(w, ",\"tid\":");
	ctp_jsonw_u64(w, tid);
	CTP_JSONW_LIT(w, ",\"addr\":");
	ctp_jsonw_str(w, addr);
	CTP_JSONW_LIT(w, ",\"seq\":");
	ctp_jsonw_u64(w, seq);
	if (active)
		CTP_JSONW_LIT(w, ",\"is_active\":true,\"ts\":");
	else
		CTP_JSONW_LIT(w, ",\"is_active\":false,\"ts\":");
	ctp_jsonw_u64(w, ts);
	CTP_JSONW_LIT(w, "}\n");
	return 0;
}

static int corotracer_event(void *state, const struct ctp_event *ev)
{
	struct out_corotracer *o = state;
	if (ctp_cat_names_see(o->v.names, ev) < 0)
		return -1;
	if (ev->type != CTP_EV_SWITCH)
		return 0;
	if (!o->have_pid) {
		o->have_pid = true;
		o->first_pid = ev->pid;
	} else if (ev->pid != o->first_pid && !o->warned) {
		o->warned = true;
		fputs("ctp-cat: the trace has several processes; their coroutine ids mix in "
		      "coroTracer records (--pid picks one)\n",
		      stderr);
	}
	ctp_jsonw_reset(&o->w);
	if ((ev->sw.from && put_record(o, ev->pid, ev->sw.from, ev->tid, false, ev->ts) < 0) ||
	    (ev->sw.to && put_record(o, ev->pid, ev->sw.to, ev->tid, true, ev->ts) < 0))
		return -1;
	if (fwrite_unlocked(o->w.buf, 1, o->w.len, o->v.f) != o->w.len)
		return -1;
	return 0;
}

static void corotracer_free(void *state)
{
	struct out_corotracer *o = state;
	ctp_jsonw_free(&o->w);
	ctp_cat_view_free(o);
}

int ctp_cat_out_corotracer_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_corotracer *o = ctp_cat_view_new(sizeof(*o), f, false);
	if (!o)
		return -1;
	if (!(o->v.names = ctp_cat_names_new_counting())) {
		ctp_cat_view_free(o);
		return -1;
	}
	ctp_jsonw_init(&o->w);
	out->state = o;
	out->event = corotracer_event;
	out->finish = ctp_cat_view_finish;
	out->free = corotracer_free;
	return 0;
}

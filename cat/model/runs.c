#include "cat/model/runs.h"

#include <stdlib.h>
#include <string.h>

#include "cat/model/grow.h"

struct ctp_run *ctp_runs_thread(struct ctp_runs *r, uint32_t pid, uint32_t tid, bool *made)
{
	*made = false;
	uint32_t at = ctp_idmap_get(&r->index, pid, tid);
	if (at != CTP_IDMAP_NONE)
		return &r->runs[at];
	size_t slot = r->n;
	for (size_t i = 0; i < r->n; i++)
		if (r->runs[i].pid == 0) {
			slot = i;
			break;
		}
	if (slot == r->n) {
		if (CTP_GROW(r->runs, r->cap, r->n + 1) < 0)
			return NULL;
		r->n++;
	}
	if (ctp_idmap_put(&r->index, pid, tid, (uint32_t)slot) < 0)
		return NULL;
	struct ctp_run *run = &r->runs[slot];
	memset(run, 0, sizeof(*run));
	run->pid = pid;
	run->tid = tid;
	*made = true;
	return run;
}

int ctp_runs_switch(struct ctp_runs *r, const struct ctp_event *sw, uint64_t from_created_ts,
		    uint32_t from_created_tid, struct ctp_run_step *step)
{
	memset(step, 0, sizeof(*step));
	struct ctp_run *run = ctp_runs_thread(r, sw->pid, sw->tid, &step->new_thread);
	if (!run)
		return -1;
	uint64_t ts = sw->ts;
	if (!run->open && from_created_ts && from_created_tid == sw->tid && from_created_ts <= ts) {
		/* The thread's first switch: `from` ran since it was made here. */
		run->open = true;
		run->initial = true;
		run->coro = sw->sw.from;
		run->start = from_created_ts;
	}
	step->ended = *run;
	run->open = true;
	run->initial = false;
	run->coro = sw->sw.to;
	run->start = ts;
	run->by = sw->sw.from;
	run->how = sw->sw.how_name;
	run->last_ts = ts;
	return 0;
}

void ctp_runs_end_process(struct ctp_runs *r, uint32_t pid,
			  void (*fn)(void *ctx, const struct ctp_run *run), void *ctx)
{
	for (size_t i = 0; i < r->n && pid; i++) {
		struct ctp_run *run = &r->runs[i];
		if (run->pid != pid)
			continue;
		if (fn)
			fn(ctx, run);
		ctp_idmap_del(&r->index, run->pid, run->tid);
		run->pid = 0;
	}
}

void ctp_runs_free(struct ctp_runs *r)
{
	ctp_idmap_free(&r->index);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}

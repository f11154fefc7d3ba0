#include "preload/coro_make.h"

#include "preload/events.h"
#include "preload/stackmap.h"
#include "preload/stations.h"

void ctp_coro_make_run(void *arg)
{
	struct ctp_coro_make_job *job = arg;
	struct ctp_thread *t = job->t;
	job->idx = ctp_station_alloc();
	if (job->idx == CTP_NO_STATION) {
		ctp_stackmap_retire_overlapping(t, job->lo, job->hi);
		return;
	}
	/* Before its beginning: the coroutines it retires end before it is made. */
	ctp_stackmap_claim(t, job->idx, job->lo, job->hi);
	ctp_coro_begin(t, job->idx, job->coro, job->kind, job->entry, job->lo, job->hi,
		       CTP_STATE_CREATED, job->call_site, job->slot);
	ctp_stackmap_hint(t, job->first_sp, job->idx);
	ctp_stack_base_note(job->lo);
}

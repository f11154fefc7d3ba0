/* See snapshot_watch.h. Memory: one entry per process whose counted snapshot is open, removed
 * when it is whole. */
#include "cat/analysis/snapshot_watch.h"

static void became_whole(struct ctp_snapshot_watch *w)
{
	w->open--;
	w->whole = true;
}

static void close_uncounted(struct ctp_snapshot_watch *w)
{
	if (w->uncounted_pid) {
		w->uncounted_pid = 0;
		became_whole(w);
	}
}

static int on_snapshot(struct ctp_snapshot_watch *w, const struct ctp_event *ev)
{
	/* A new snapshot of a pid whose counted one is still open replaces it (its states were
	 * cut short: nothing to wait for). An open uncounted one was closed by this line. */
	if (ctp_idmap_get(&w->left, ev->pid, 0) != CTP_IDMAP_NONE) {
		ctp_idmap_del(&w->left, ev->pid, 0);
		w->open--;
	}
	if (ev->ts > w->latest_ts)
		w->latest_ts = ev->ts;
	w->open++;
	if (!ev->snapshot.has_states) {
		close_uncounted(w);
		w->uncounted_pid = ev->pid;
		return 0;
	}
	if (ev->snapshot.states == 0) {
		became_whole(w);
		return 0;
	}
	uint32_t left = ev->snapshot.states >= CTP_IDMAP_NONE ? CTP_IDMAP_NONE - 1
							      : (uint32_t)ev->snapshot.states;
	if (ctp_idmap_put(&w->left, ev->pid, 0, left) < 0)
		return -1;
	return 0;
}

static int on_state(struct ctp_snapshot_watch *w, const struct ctp_event *ev)
{
	if (w->uncounted_pid && w->uncounted_pid == ev->pid) {
		w->state_in_snapshot = true;
		return 0;
	}
	uint32_t left = ctp_idmap_get(&w->left, ev->pid, 0);
	if (left == CTP_IDMAP_NONE)
		return 0;
	w->state_in_snapshot = true;
	if (--left == 0) {
		ctp_idmap_del(&w->left, ev->pid, 0);
		became_whole(w);
		return 0;
	}
	return ctp_idmap_put(&w->left, ev->pid, 0, left);
}

int ctp_snapshot_watch_event(struct ctp_snapshot_watch *w, const struct ctp_event *ev)
{
	w->state_in_snapshot = false;
	if (w->uncounted_pid && !(ev->type == CTP_EV_STATE && ev->pid == w->uncounted_pid))
		close_uncounted(w);
	if (ev->type == CTP_EV_SNAPSHOT && ev->pid)
		return on_snapshot(w, ev);
	if (ev->type == CTP_EV_STATE)
		return on_state(w, ev);
	return 0;
}

bool ctp_snapshot_watch_due(const struct ctp_snapshot_watch *w)
{
	return w->whole && w->open == 0;
}

bool ctp_snapshot_watch_in_round(const struct ctp_event *ev)
{
	return ev->type == CTP_EV_SNAPSHOT || ev->type == CTP_EV_STATE;
}

void ctp_snapshot_watch_taken(struct ctp_snapshot_watch *w)
{
	w->whole = false;
}

void ctp_snapshot_watch_free(struct ctp_snapshot_watch *w)
{
	ctp_idmap_free(&w->left);
}

#include "ctp/station.h"

enum { STATION_READ_TRIES = 64 };

static void copy_fields(const struct ctp_station *s, uint32_t depth,
			struct ctp_station_snapshot *out)
{
	out->state = CTP_LOAD_RELAXED(&s->state);
	out->kind = CTP_LOAD_RELAXED(&s->kind);
	out->coro = CTP_LOAD_RELAXED(&s->coro);
	out->tid = CTP_LOAD_RELAXED(&s->tid);
	out->entry = CTP_LOAD_RELAXED(&s->entry);
	out->created = CTP_LOAD_RELAXED(&s->created);
	out->last_switch = CTP_LOAD_RELAXED(&s->last_switch);
	out->switches = CTP_LOAD_RELAXED(&s->switches);
	out->stack_lo = CTP_LOAD_RELAXED(&s->stack_lo);
	out->stack_hi = CTP_LOAD_RELAXED(&s->stack_hi);
	out->wait_fd = CTP_LOAD_RELAXED(&s->wait_fd);
	out->wait_op = CTP_LOAD_RELAXED(&s->wait_op);
	out->saved_ctx = CTP_LOAD_RELAXED(&s->saved_ctx);
	out->ctx_kind = CTP_LOAD_RELAXED(&s->ctx_kind);
	out->stack_kind = CTP_LOAD_RELAXED(&s->stack_kind);
	out->ended_to = CTP_LOAD_RELAXED(&s->ended_to);
	uint32_t len = CTP_LOAD_RELAXED(&s->stack_len);
	if (len > depth)
		len = depth;
	out->stack_len = len;
	for (uint32_t i = 0; i < len; i++)
		out->frames[i] = CTP_LOAD_RELAXED(&s->frames[i]);
}

bool ctp_station_read(const struct ctp_station *s, uint32_t depth, struct ctp_station_snapshot *out)
{
	if (depth > CTP_MAX_STACK_DEPTH)
		depth = CTP_MAX_STACK_DEPTH;
	for (int i = 0; i < STATION_READ_TRIES; i++) {
		uint32_t before = CTP_LOAD_ACQUIRE(&s->seq);
		copy_fields(s, depth, out);
		/* Acquire fence: the copies above are ordered before the second read of seq. */
		CTP_FENCE_ACQUIRE();
		uint32_t after = CTP_LOAD_RELAXED(&s->seq);
		if (before == after && (before & 1) == 0) {
			out->torn = false;
			return true;
		}
	}
	out->torn = true;
	return false;
}

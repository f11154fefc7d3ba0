/* What the station tests share: a cache-line aligned station, and a writer that sets every
 * field and frame to one value so that a reader can tell a torn copy from a whole one. */
#ifndef CTP_TEST_STATION_FIXTURE_H
#define CTP_TEST_STATION_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctp/station.h"

static inline struct ctp_station *test_station_new(uint32_t depth)
{
	uint32_t size = ctp_station_size(depth);
	struct ctp_station *s = aligned_alloc(CTP_CACHE_LINE, size);
	memset(s, 0, size);
	return s;
}

/* One seqlock update that sets every field the reader copies, and `depth` frames, to `v`
 * (truncated to the field's width). */
static inline void test_station_set_all(struct ctp_station *s, uint32_t depth, uint64_t v)
{
	uint32_t seq = ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->state, (uint32_t)v);
	CTP_STORE_RELAXED(&s->coro, v);
	CTP_STORE_RELAXED(&s->kind, (uint32_t)v);
	CTP_STORE_RELAXED(&s->tid, (uint32_t)v);
	CTP_STORE_RELAXED(&s->entry, v);
	CTP_STORE_RELAXED(&s->created, v);
	CTP_STORE_RELAXED(&s->last_switch, v);
	CTP_STORE_RELAXED(&s->switches, v);
	CTP_STORE_RELAXED(&s->stack_lo, v);
	CTP_STORE_RELAXED(&s->stack_hi, v);
	CTP_STORE_RELAXED(&s->wait_fd, (int32_t)v);
	CTP_STORE_RELAXED(&s->wait_op, (uint32_t)v);
	CTP_STORE_RELAXED(&s->stack_len, depth);
	for (uint32_t i = 0; i < depth; i++)
		CTP_STORE_RELAXED(&s->frames[i], v);
	ctp_station_write_end(s, seq);
}

/* True when every field of the copy holds the value of one test_station_set_all call. */
static inline bool test_snapshot_is_whole(const struct ctp_station_snapshot *c, uint32_t depth)
{
	uint64_t v = c->coro;
	uint32_t v32 = (uint32_t)v;
	if (c->state != v32 || c->kind != v32 || c->tid != v32 || c->entry != v ||
	    c->created != v || c->last_switch != v || c->switches != v || c->stack_lo != v ||
	    c->stack_hi != v || c->wait_fd != (int32_t)v32 || c->wait_op != v32 ||
	    c->stack_len != depth)
		return false;
	for (uint32_t i = 0; i < depth; i++)
		if (c->frames[i] != v)
			return false;
	return true;
}

#endif

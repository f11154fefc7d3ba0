/* The floor of a recorded switch: what every traced switch does once its hook has found the
 * target (ctp_switch_with_stack, preload/switch_path.h, the very code the preload runs): the
 * seqlocked updates of both stations and the SWITCH record with the call site. Here it runs in
 * a loop with no hook, no target lookup and no clock read, the stations and the ring laid out
 * as in a segment, and the ring emptied by a consumer that is always caught up (this thread,
 * when the ring is half full, where the preload would wake the collector): no other core takes
 * its lines. What a traced switch costs beyond this is the hook, the lookup, the clock and the
 * collector reading the ring from another core.
 *
 *   bench_record_floor [switches]   (default 20,000,000)
 *
 * Prints one line: "bench_record_floor switches=N ns_per_switch=X". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctp/ring.h"
#include "ctp/segment.h"
#include "preload/switch_path.h"

enum { RING_BYTES = 4 << 20, DEPTH = 16, CALL_SITE = 0x401000 };

/* The two symbols of the preload that the inline switch path refers to. */
__thread uint8_t ctp_context_saved;

void ctp_emit_wake_if_full(struct ctp_thread *t)
{
	CTP_STORE_RELEASE(&t->ring.ring->tail, t->ring.head);
	(void)ctp_ring_fill_fresh(&t->ring);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *zeroed(size_t align, size_t bytes)
{
	void *p = aligned_alloc(align, bytes);
	if (!p) {
		perror("bench_record_floor");
		exit(1);
	}
	return memset(p, 0, bytes);
}

int main(int argc, char **argv)
{
	long switches = argc > 1 ? atol(argv[1]) : 20000000;
	uint32_t station_bytes = ctp_station_size(DEPTH);
	uint8_t *stations = zeroed(CTP_CACHE_LINE, 2 * (size_t)station_bytes);
	struct ctp_station *st[2] = {(struct ctp_station *)stations,
				     (struct ctp_station *)(stations + station_bytes)};
	struct ctp_ring *ring = zeroed(CTP_CACHE_LINE, sizeof(*ring));
	ring->capacity = RING_BYTES;
	struct ctp_thread t = {.tid = 1, .current = 0, .current_station = st[0]};
	ctp_ring_producer_init(&t.ring, ring, zeroed(4096, RING_BYTES));

	uint64_t start = 0;
	for (long i = -switches / 10; i < switches; i++) { /* the first tenth warms up */
		if (i == 0)
			start = now_ns();
		uint32_t to = !t.current;
		uint64_t site = CALL_SITE + to;
		struct ctp_suspend_point at = {.call_site = site,
					       .ret_slot = (uint64_t)&site,
					       .ctx = (uint64_t)&site - 0x38,
					       .ctx_kind = CTP_CTX_FCONTEXT};
		ctp_switch_with_stack(&t, t.current_station, to, st[to], CTP_HOW_JUMP_FCONTEXT,
				      CTP_STATE_SUSPENDED, (uint64_t)i, &site, 1,
				      CTP_STACK_CALL_SITE, &at);
	}
	double ns = (double)(now_ns() - start);
	printf("bench_record_floor switches=%ld ns_per_switch=%.2f\n", switches,
	       switches > 0 ? ns / (double)switches : 0.0);
	return CTP_LOAD_RELAXED(&ring->dropped) == 0 ? 0 : 1;
}

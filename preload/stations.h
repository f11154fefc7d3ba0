/* Stations (stations.c): one per coroutine and per thread's own stack, found by index on every
 * switch, recycled through a lock-free free list. */
#ifndef CTP_PRELOAD_STATIONS_H
#define CTP_PRELOAD_STATIONS_H

#include <stdint.h>

#include "ctp/segment.h"
#include "preload/compiler.h"

#define CTP_NO_STATION UINT32_MAX

/* What the preload alone knows of a coroutine (per station, private memory). */
struct ctp_coro_private {
	void *start_data; /* fcontext: the data of its first resume (Boost: its record) */
};

/* Stations come in chunks of a power of two, fixed at build time: finding one is on every
 * switch, and a division by a value read from the header would cost more than the lookup. */
#define CTP_STATION_CHUNK_SHIFT 10
#define CTP_STATION_MAX_CHUNKS (1 << 16)

struct ctp_station_dir {
	uint8_t *chunk[CTP_STATION_MAX_CHUNKS]; /* station 0 of each chunk; release/acquire */
	struct ctp_coro_private *priv[CTP_STATION_MAX_CHUNKS];
	uint32_t station_size; /* header.station_size, kept where the switch path reads it */
	/* Free list head: index + 1 in the low 32 bits (0 = empty), a tag in the high 32 bits so
	 * that a pop racing with pop+push of the same index fails (ABA). */
	uint64_t free_head;
};
extern struct ctp_station_dir ctp_station_dir CTP_HIDDEN;

static inline struct ctp_station *ctp_station_at(uint32_t idx)
{
	uint8_t *chunk = __atomic_load_n(&ctp_station_dir.chunk[idx >> CTP_STATION_CHUNK_SHIFT],
					 __ATOMIC_ACQUIRE);
	uint32_t slot = idx & ((1u << CTP_STATION_CHUNK_SHIFT) - 1);
	return (struct ctp_station *)(chunk + (uint64_t)slot * ctp_station_dir.station_size);
}

CTP_HIDDEN void ctp_stations_init(void);
CTP_HIDDEN void ctp_stations_fork_child(void);
CTP_HIDDEN uint32_t ctp_station_alloc(void);
CTP_HIDDEN void ctp_station_free(uint32_t idx);
CTP_HIDDEN struct ctp_coro_private *ctp_station_private(uint32_t idx);
/* Calls fn for every station index handed out so far (slow: fork, lookups that missed). */
CTP_HIDDEN void ctp_stations_each(void (*fn)(uint32_t idx, struct ctp_station *s, void *arg),
				  void *arg);

#endif

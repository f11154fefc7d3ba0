/* The per-process fd table: one slot per fd number, in private memory (fds are per process, and
 * the collector learns of them through records and stations, never from here). It is one
 * anonymous mapping sized for RLIMIT_NOFILE's hard limit, made on first need with mmap alone (no
 * malloc: hooks can run in signal handlers and before the constructor). Pages are committed only
 * when touched, so a large limit costs address space, not memory. Fds beyond the table are
 * ignored. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/fd_table.h"

/* fs.nr_open's default: no fd can be higher unless root raised it. */
enum { MAX_FDS = 1 << 20, MIN_FDS = 1024 };

struct ctp_fd_table ctp_fd_table;

static uint32_t table_size(void)
{
	struct rlimit rl;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0)
		return MIN_FDS;
	rlim_t n = rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
	if (n == RLIM_INFINITY || n > MAX_FDS)
		return MAX_FDS;
	return n < MIN_FDS ? MIN_FDS : (uint32_t)n;
}

static struct ctp_fd_slot *make_table(void)
{
	struct ctp_fd_slot *slots = __atomic_load_n(&ctp_fd_table.slots, __ATOMIC_ACQUIRE);
	if (slots)
		return slots;
	int saved = errno; /* hooks that call this keep the program's errno */
	uint32_t count = table_size();
	size_t bytes = (size_t)count * sizeof(struct ctp_fd_slot);
	void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	if (map == MAP_FAILED)
		return NULL;
	/* Two threads may race here: the loser unmaps its own. count is stored before the
	 * release that publishes the table, and only ever with this same value. */
	__atomic_store_n(&ctp_fd_table.count, count, __ATOMIC_RELAXED);
	struct ctp_fd_slot *expected = NULL;
	if (!__atomic_compare_exchange_n(&ctp_fd_table.slots, &expected, map, false,
					 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
		munmap(map, bytes);
		return expected;
	}
	return map;
}

struct ctp_fd_slot *ctp_fd_slot_make(int fd)
{
	if (fd < 0 || !make_table() || (unsigned)fd >= ctp_fd_table.count)
		return NULL;
	/* The high-water mark bounds close_range's walk over the table. */
	uint32_t high = __atomic_load_n(&ctp_fd_table.high, __ATOMIC_RELAXED);
	while ((uint32_t)fd >= high &&
	       !__atomic_compare_exchange_n(&ctp_fd_table.high, &high, (uint32_t)fd + 1, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return ctp_fd_slot(fd);
}

void ctp_fd_slot_reset(struct ctp_fd_slot *s)
{
	__atomic_store_n(&s->station, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->waiter, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->op, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->watch, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->probe, 0, __ATOMIC_RELAXED);
}

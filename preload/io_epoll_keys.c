/* epoll_wait reports the `data` given at registration, not the fd: Asio passes a pointer to its
 * descriptor state, pdns-recursor the fd itself. This map, filled by the epoll_ctl hook, turns
 * a reported `data` back into the fd. Open addressing; entries are claimed with a
 * compare-and-swap and never freed: a `data` value is registered again (ADD/MOD) before epoll
 * can report it again, and that updates its entry.
 *
 * Two tables: a small one in the library's own zeroed data, where a program's first keys go,
 * and a large one, mapped on first need, for keys that find no room near their place in the
 * small one. Every reported event is looked up, and a lookup in one table of 65,536 entries
 * (1 MiB) read one line of a page of its own for each key: Asio's 200 sockets touched 200 pages
 * at every message, and those lookups missed the cache and the TLB often enough to take a
 * fifth of the preload's time in its echo server (perf: 854 samples of 3,941). The small
 * table's 16 KiB hold a thousand keys or so in four pages. When neither table has room near a
 * key's place, the key is left out, and its readiness goes unattributed. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

#include "preload/io_epoll_keys.h"

enum {
	NEAR_BITS = 10, /* 1,024 entries, 16 KiB */
	FAR_BITS = 16,	/* 65,536 entries, 1 MiB */
	/* How far past its place a key may go: a small window keeps a look for a key of the
	 * large table short, as it passes through the small one first. */
	NEAR_PROBES = 8,
	FAR_PROBES = 64,
};

struct key_entry {
	uint64_t data;
	uint32_t used;	   /* claimed; data is stored after the claim */
	uint32_t fd_plus1; /* 0 = none; release/acquire */
};

static struct key_entry near_keys[1 << NEAR_BITS] __attribute__((aligned(64)));
static struct key_entry *far_keys;
static uint32_t zero_fd_plus1; /* data 0 (fd 0, or a null pointer) cannot be a probe key */

static struct key_entry *far_table(bool create)
{
	struct key_entry *t = __atomic_load_n(&far_keys, __ATOMIC_ACQUIRE);
	if (t || !create)
		return t;
	size_t bytes = sizeof(struct key_entry) << FAR_BITS;
	int saved = errno;
	void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	if (map == MAP_FAILED)
		return NULL;
	struct key_entry *expected = NULL;
	if (!__atomic_compare_exchange_n(&far_keys, &expected, map, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		munmap(map, bytes);
		return expected;
	}
	return map;
}

/* A key's place in a table of 1 << bits entries. Pointers share low zero bits and fds are
 * small: mixed before the high bits are taken. */
static uint32_t place_of(uint64_t data, unsigned bits)
{
	return (uint32_t)((data * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* Records data -> fd in the table; false when its window is full of other keys. */
static bool table_set(struct key_entry *t, unsigned bits, uint32_t probes, uint64_t data, int fd)
{
	uint32_t mask = (1u << bits) - 1, h = place_of(data, bits);
	for (uint32_t i = 0; i < probes; i++) {
		struct key_entry *e = &t[(h + i) & mask];
		if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE)) {
			uint32_t free_mark = 0;
			if (__atomic_compare_exchange_n(&e->used, &free_mark, 1, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&e->data, data, __ATOMIC_RELAXED);
				__atomic_store_n(&e->fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
				return true;
			}
		}
		/* A claim still filling in its data reads as another key: at worst the key
		 * gets a second entry, and lookups take the first. */
		if (__atomic_load_n(&e->data, __ATOMIC_RELAXED) == data) {
			__atomic_store_n(&e->fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
			return true;
		}
	}
	return false;
}

/* The key's entry in the table; NULL when it is not there. *full: every entry of its window is
 * another key's, so that it may be in the large table (a key goes there only then, and entries
 * are never freed). */
static const struct key_entry *table_find(const struct key_entry *t, unsigned bits, uint32_t probes,
					  uint64_t data, bool *full)
{
	uint32_t mask = (1u << bits) - 1, h = place_of(data, bits);
	*full = false;
	for (uint32_t i = 0; i < probes; i++) {
		const struct key_entry *e = &t[(h + i) & mask];
		if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE))
			return NULL;
		if (__atomic_load_n(&e->data, __ATOMIC_RELAXED) == data)
			return e;
	}
	*full = true;
	return NULL;
}

void ctp_epoll_key_set(uint64_t data, int fd)
{
	if (data == 0) {
		__atomic_store_n(&zero_fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
		return;
	}
	if (table_set(near_keys, NEAR_BITS, NEAR_PROBES, data, fd))
		return;
	struct key_entry *far = far_table(true);
	if (far)
		table_set(far, FAR_BITS, FAR_PROBES, data, fd);
}

int ctp_epoll_key_find(uint64_t data)
{
	if (data == 0)
		return (int)__atomic_load_n(&zero_fd_plus1, __ATOMIC_ACQUIRE) - 1;
	bool full;
	const struct key_entry *e = table_find(near_keys, NEAR_BITS, NEAR_PROBES, data, &full);
	const struct key_entry *far;
	if (!e && full && (far = far_table(false)))
		e = table_find(far, FAR_BITS, FAR_PROBES, data, &full);
	return e ? (int)__atomic_load_n(&e->fd_plus1, __ATOMIC_ACQUIRE) - 1 : -1;
}

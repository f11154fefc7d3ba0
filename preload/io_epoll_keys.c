/* epoll_wait reports the `data` given at registration, not the fd: Asio passes a pointer to its
 * descriptor state, pdns-recursor the fd itself. This map, filled by the epoll_ctl hook, turns
 * a reported `data` back into the fd. Open addressing in one private anonymous mapping, made on
 * first need; entries are claimed with a compare-and-swap and never freed: a `data` value is
 * registered again (ADD/MOD) before epoll can report it again, and that updates its entry.
 * When the probe finds no room the key is left out, and its readiness goes unattributed. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

#include "preload/io_epoll_keys.h"

enum { KEYS = 1 << 16, PROBES = 64 };

struct key_entry {
	uint64_t data;
	uint32_t used;	   /* claimed; data is stored after the claim */
	uint32_t fd_plus1; /* 0 = none; release/acquire */
};

static struct key_entry *table;
static uint32_t zero_fd_plus1; /* data 0 (fd 0, or a null pointer) cannot be a probe key */

static struct key_entry *get_table(void)
{
	struct key_entry *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (t)
		return t;
	int saved = errno;
	void *map = mmap(NULL, KEYS * sizeof(struct key_entry), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	errno = saved;
	if (map == MAP_FAILED)
		return NULL;
	struct key_entry *expected = NULL;
	if (!__atomic_compare_exchange_n(&table, &expected, map, false, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE)) {
		munmap(map, KEYS * sizeof(struct key_entry));
		return expected;
	}
	return map;
}

static uint32_t hash(uint64_t data)
{
	/* Pointers share low zero bits and fds are small: mix before masking. */
	data *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(data >> 40) & (KEYS - 1);
}

void ctp_epoll_key_set(uint64_t data, int fd)
{
	if (data == 0) {
		__atomic_store_n(&zero_fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
		return;
	}
	struct key_entry *t = get_table();
	if (!t)
		return;
	uint32_t h = hash(data);
	for (uint32_t i = 0; i < PROBES; i++) {
		struct key_entry *e = &t[(h + i) & (KEYS - 1)];
		if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE)) {
			uint32_t free_mark = 0;
			if (__atomic_compare_exchange_n(&e->used, &free_mark, 1, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&e->data, data, __ATOMIC_RELAXED);
				__atomic_store_n(&e->fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
				return;
			}
		}
		/* A claim still filling in its data reads as another key: at worst the key
		 * gets a second entry, and lookups take the first. */
		if (__atomic_load_n(&e->data, __ATOMIC_RELAXED) == data) {
			__atomic_store_n(&e->fd_plus1, (uint32_t)fd + 1, __ATOMIC_RELEASE);
			return;
		}
	}
}

int ctp_epoll_key_find(uint64_t data)
{
	if (data == 0)
		return (int)__atomic_load_n(&zero_fd_plus1, __ATOMIC_ACQUIRE) - 1;
	struct key_entry *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (!t)
		return -1;
	uint32_t h = hash(data);
	for (uint32_t i = 0; i < PROBES; i++) {
		struct key_entry *e = &t[(h + i) & (KEYS - 1)];
		if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE))
			return -1;
		if (__atomic_load_n(&e->data, __ATOMIC_RELAXED) == data)
			return (int)__atomic_load_n(&e->fd_plus1, __ATOMIC_ACQUIRE) - 1;
	}
	return -1;
}

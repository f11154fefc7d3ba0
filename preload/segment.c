/* The process's segment: one memfd, grown with ftruncate and mapped in extents (see ctp/CTP.md
 * "Lifetime of a segment"). The collector knows blocks by their offset in the file and maps the
 * file as a whole; the preload maps it piece by piece, each extent at an address of its own that
 * never moves, so every pointer it holds into the segment stays valid, and it reserves only
 * about what it uses (a fixed reservation of the largest size allowed would count against
 * RLIMIT_AS and show in VmSize whatever the program did). A block never straddles two extents.
 *
 * Growth takes a lock (a futex after a short spin), but only allocation grows the segment:
 * creating a coroutine's station chunk, a thread's ring or a module chunk, never a switch. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "ctp/clock.h"
#include "ctp/segment.h"
#include "preload/own_fds.h"
#include "preload/process.h"
#include "preload/segment.h"
#include "preload/stations.h"

struct ctp_segment ctp_seg;

enum {
	PAGE = 4096,
	GROW_STEP = 1 << 20,
	FIRST_COMMIT = 1 << 20,
	FIRST_EXTENT = 8 << 20,
	/* A new extent reserves at least this, and a quarter of what is mapped already, so that
	 * the count of extents stays small and the unused tail of the last one bounded. */
	MIN_EXTENT = 8 << 20,
};

/* The growth lock: 0 free, 1 held, 2 held with a thread that may sleep on it. A waiter spins a
 * little, then sleeps on a futex. Spinning alone was a pause loop: 200 threads of a program
 * starting at once, each allocating its ring on 2 CPUs, spun away the time slices of the holder,
 * preempted in its ftruncate or mmap, and "ready" came 0.03-1.5 s after the start instead of 0.02
 * (transparency/threads_vm; past 10 s once under a loaded CI). The callers keep errno. */
enum { LOCK_SPINS = 100 };

static void lock(void)
{
	for (int i = 0; i < LOCK_SPINS; i++) {
		int expected = 0;
		if (__atomic_compare_exchange_n(&ctp_seg.lock, &expected, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		__builtin_ia32_pause();
	}
	/* Marked 2 before it sleeps, so that the holder's unlock wakes a sleeper; taken with 2,
	 * as other threads may still sleep. */
	while (__atomic_exchange_n(&ctp_seg.lock, 2, __ATOMIC_ACQUIRE) != 0)
		syscall(SYS_futex, &ctp_seg.lock, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static void unlock(void)
{
	if (__atomic_exchange_n(&ctp_seg.lock, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, &ctp_seg.lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static int new_memfd(void)
{
	int fd = (int)syscall(SYS_memfd_create, "ctp-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return fd < 0 ? fd : ctp_own_fd_move_high(fd);
}

void *ctp_segment_ptr(uint64_t off)
{
	uint32_t n = __atomic_load_n(&ctp_seg.extent_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = n; i-- > 0;) {
		const struct ctp_extent *e = &ctp_seg.extents[i];
		if (off >= e->off && off < e->off + e->size)
			return e->base + (off - e->off);
	}
	return NULL;
}

/* Whether the file size limit allows a file of `size` bytes. A memfd counts: an ftruncate past
 * RLIMIT_FSIZE would send the program SIGXFSZ, which kills it by default. */
static bool size_allowed(uint64_t size)
{
	struct rlimit rl;
	return syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl) != 0 ||
	       rl.rlim_cur == RLIM_INFINITY || size <= rl.rlim_cur;
}

static bool commit(uint64_t size)
{
	/* The memfd's number may name a file of the program's by now (own_fds.c): never truncate
	 * that. */
	if (!size_allowed(size) || !ctp_own_fd_valid(&ctp_seg.memfd) ||
	    syscall(SYS_ftruncate, ctp_seg.memfd, (off_t)size) != 0)
		return false;
	/* Release: a collector that sees the new size finds the bytes there. */
	CTP_STORE_RELEASE(&ctp_seg.hdr->segment_size, size);
	return true;
}

static uint8_t *map_extent(int fd, uint64_t off, uint64_t size, void *at)
{
	void *p = mmap(at, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_NORESERVE | (at ? MAP_FIXED : 0), fd, (off_t)off);
	return p == MAP_FAILED ? NULL : p;
}

/* Maps a new extent starting at file offset `off`, room for at least `need` bytes. */
static bool add_extent(uint64_t off, uint64_t need)
{
	uint32_t n = ctp_seg.extent_count;
	if (n == CTP_MAX_EXTENTS)
		return false;
	uint64_t size = ctp_seg.mapped / 4 > MIN_EXTENT ? ctp_seg.mapped / 4 : MIN_EXTENT;
	if (size < need)
		size = (need + GROW_STEP - 1) & ~(uint64_t)(GROW_STEP - 1);
	if (off + size > ctp_proc.config.segment_max)
		size = ctp_proc.config.segment_max - off;
	if (size < need || !ctp_own_fd_valid(&ctp_seg.memfd))
		return false;
	uint8_t *base = map_extent(ctp_seg.memfd, off, size, NULL);
	if (!base)
		return false;
	ctp_seg.extents[n] = (struct ctp_extent){.off = off, .size = size, .base = base};
	ctp_seg.mapped += size;
	__atomic_store_n(&ctp_seg.extent_count, n + 1, __ATOMIC_RELEASE);
	return true;
}

void ctp_segment_release(void)
{
	for (uint32_t i = 0; i < ctp_seg.extent_count; i++)
		syscall(SYS_munmap, ctp_seg.extents[i].base, ctp_seg.extents[i].size);
	ctp_own_fd_close(&ctp_seg.memfd);
	ctp_seg.hdr = NULL;
	ctp_seg.extent_count = 0;
	ctp_seg.mapped = ctp_seg.used = 0;
}

bool ctp_segment_create(void)
{
	uint64_t max = ctp_proc.config.segment_max;
	ctp_seg.memfd = new_memfd();
	if (ctp_seg.memfd < 0) {
		ctp_log("cannot create the segment: memfd_create: ", strerror(errno), NULL);
		return false;
	}
	ctp_own_fd_register(&ctp_seg.memfd);
	if (!size_allowed(FIRST_COMMIT)) {
		ctp_log("the file size limit (ulimit -f) leaves no room for the segment", NULL,
			NULL);
		ctp_segment_release();
		return false;
	}
	if (syscall(SYS_ftruncate, ctp_seg.memfd, (off_t)FIRST_COMMIT) != 0 ||
	    syscall(SYS_fcntl, ctp_seg.memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
		ctp_log("cannot size the segment: ", strerror(errno), NULL);
		ctp_segment_release();
		return false;
	}
	if (!add_extent(0, max < FIRST_EXTENT ? max : FIRST_EXTENT)) {
		ctp_log("cannot map the segment: ", strerror(errno), NULL);
		ctp_segment_release();
		return false;
	}
	ctp_seg.hdr = (struct ctp_header *)ctp_seg.extents[0].base;
	ctp_seg.used = sizeof(struct ctp_header);

	struct ctp_header *h = ctp_seg.hdr;
	h->magic = CTP_MAGIC;
	h->version = CTP_VERSION;
	h->header_size = sizeof(struct ctp_header);
	h->pid = ctp_proc.pid;
	h->clock_kind = ctp_proc.use_tsc ? CTP_CLOCK_TSC : CTP_CLOCK_MONOTONIC_NS;
	h->segment_size = FIRST_COMMIT;
	h->segment_max = max;
	h->stack_depth = ctp_proc.config.stack_depth;
	h->station_size = ctp_station_size(h->stack_depth);
	h->next_coro_id = ctp_proc.config.first_coro_id;
	h->start_tsc = ctp_now();
	h->start_mono_ns = ctp_monotonic_ns();
	ctp_stations_init();
	return true;
}

/* Room for `size` bytes at a cache-line aligned offset within one extent; 0 when there is none.
 * Under the lock. */
static uint64_t reserve(uint64_t size)
{
	uint64_t off = (ctp_seg.used + CTP_CACHE_LINE - 1) & ~(uint64_t)(CTP_CACHE_LINE - 1);
	const struct ctp_extent *last = &ctp_seg.extents[ctp_seg.extent_count - 1];
	if (off + size > last->off + last->size) {
		/* The rest of the last extent stays unused (and untouched: it costs no memory). */
		off = (last->off + last->size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
		if (!add_extent(off, size))
			return 0;
	}
	uint64_t end = off + size;
	if (end > ctp_proc.config.segment_max)
		return 0;
	uint64_t committed = CTP_LOAD_RELAXED(&ctp_seg.hdr->segment_size);
	if (end > committed) {
		uint64_t want = committed * 2 > end ? committed * 2 : end;
		want = (want + GROW_STEP - 1) & ~(uint64_t)(GROW_STEP - 1);
		if (want > ctp_proc.config.segment_max)
			want = ctp_proc.config.segment_max;
		if (!commit(want))
			return 0;
	}
	ctp_seg.used = end;
	return off;
}

uint64_t ctp_segment_alloc_block(uint32_t kind, uint64_t size,
				 void (*fill)(void *block, uint64_t off, void *arg), void *arg)
{
	size = (size + CTP_CACHE_LINE - 1) & ~(uint64_t)(CTP_CACHE_LINE - 1);
	int saved_errno = errno;
	lock();
	uint64_t off = reserve(size);
	unlock();
	errno = saved_errno;
	if (!off)
		return 0;

	struct ctp_block *b = ctp_segment_ptr(off);
	b->kind = kind;
	b->size = size;
	fill(b, off, arg);
	/* Push: the block is complete before it is reachable (release). */
	uint64_t head = CTP_LOAD_RELAXED(&ctp_seg.hdr->blocks_head);
	do
		CTP_STORE_RELAXED(&b->next, head);
	while (!__atomic_compare_exchange_n(&ctp_seg.hdr->blocks_head, &head, off, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	return off;
}

/* Copies [off, off + len) of the segment into fd at the same offset. */
static bool copy_range(int fd, uint64_t off, uint64_t len)
{
	const uint8_t *src = ctp_segment_ptr(off);
	for (uint64_t done = 0; src && done < len;) {
		ssize_t n = syscall(SYS_pwrite64, fd, src + done, len - done, (off_t)(off + done));
		if (n <= 0)
			return false;
		done += (uint64_t)n;
	}
	return src != NULL;
}

void ctp_segment_fork_prepare(void)
{
	ctp_seg.fork_head = CTP_LOAD_ACQUIRE(&ctp_seg.hdr->blocks_head);
}

bool ctp_segment_fork_child(void)
{
	/* The parent's file is still mapped here and shared with it: copy what the child needs
	 * into a file of its own and map that over the very same ranges, so that every pointer
	 * into the segment stays valid and no write of the child's reaches the parent's segment.
	 * Rings hold the parent's records (its collector reads them there): only their headers
	 * are copied, and the child starts them empty. Unwritten bytes of a memfd cost nothing. */
	ctp_seg.lock = 0; /* another thread may have held it at the fork: it is gone */
	uint64_t committed = ctp_seg.hdr->segment_size;
	errno = 0; /* what failed, for the message below (the caller keeps the program's) */
	int fd = new_memfd();
	bool allowed = fd >= 0 && size_allowed(committed);
	if (fd >= 0 && !allowed)
		errno = EFBIG; /* the file size limit */
	if (!allowed || syscall(SYS_ftruncate, fd, (off_t)committed) != 0 ||
	    syscall(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0 ||
	    !copy_range(fd, 0, sizeof(struct ctp_header)))
		goto fail;
	/* The head as the fork found it, not as the shared header says now: the parent's other
	 * threads go on pushing blocks, some in extents it maps after the fork, which this child
	 * does not have. Blocks below that head never change their link. */
	uint64_t head = ctp_seg.fork_head;
	for (uint64_t off = head; off;) {
		const struct ctp_block *b = ctp_segment_ptr(off);
		if (!b) /* a fork the prepare handler did not see (a raw clone): give up, safely */
			goto fail;
		uint64_t len = b->kind == CTP_BLOCK_RING ? sizeof(struct ctp_ring) : b->size;
		if (!copy_range(fd, off, len))
			goto fail;
		off = b->next;
	}
	for (uint32_t i = 0; i < ctp_seg.extent_count; i++) {
		struct ctp_extent *e = &ctp_seg.extents[i];
		if (map_extent(fd, e->off, e->size, e->base) != e->base)
			goto fail;
	}
	if (ctp_own_fd_valid(&ctp_seg.memfd))
		syscall(SYS_close, ctp_seg.memfd);
	ctp_seg.memfd = fd;
	ctp_own_fd_register(&ctp_seg.memfd);
	/* The header was copied from the shared one, which the parent may have changed since. */
	ctp_seg.hdr->blocks_head = head;
	ctp_seg.hdr->segment_size = committed;
	ctp_seg.hdr->pid = ctp_proc.pid;
	ctp_seg.hdr->sleep_flag = 0;
	ctp_seg.hdr->exit_kind = CTP_EXIT_NONE;
	return true;
fail:;
	/* Some extents may map the child's file already, others the parent's: tracing stops
	 * here, and nothing of the child's is written anywhere. Said, as the child is then not
	 * in the trace (a sandbox that denies memfd_create once the program started, say). */
	int err = errno;
	if (fd >= 0)
		syscall(SYS_close, fd);
	ctp_log("a fork child runs untraced: its copy of the segment failed: ",
		err ? strerror(err) : "the block list is not the one the fork saw", NULL);
	return false;
}

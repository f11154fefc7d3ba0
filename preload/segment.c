/* The process's segment: one memfd mapped once over a reserved range and grown in place (see
 * ctp/CTP.md "Lifetime of a segment"). Growth takes a spin lock, but only allocation grows the
 * segment: creating a coroutine or a thread's ring, never a switch. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/atomics.h"
#include "preload.h"

struct ctp_segment ctp_seg;

enum { GROW_STEP = 1 << 20, FIRST_COMMIT = 1 << 20 };

static void lock(void)
{
	while (__atomic_exchange_n(&ctp_seg.lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&ctp_seg.lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(void)
{
	__atomic_store_n(&ctp_seg.lock, 0, __ATOMIC_RELEASE);
}

static int new_memfd(void)
{
	int fd = (int)syscall(SYS_memfd_create, "ctp-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return fd < 0 ? fd : ctp_own_fd_move_high(fd);
}

static bool commit(uint64_t size)
{
	if (syscall(SYS_ftruncate, ctp_seg.memfd, (off_t)size) != 0)
		return false;
	/* Release: a collector that sees the new size finds the bytes there. */
	CTP_STORE_RELEASE(&ctp_seg.hdr->segment_size, size);
	return true;
}

bool ctp_segment_create(void)
{
	uint64_t max = ctp_proc.config.segment_max;
	ctp_seg.memfd = new_memfd();
	ctp_own_fd_register(&ctp_seg.memfd);
	if (ctp_seg.memfd < 0) {
		ctp_log("cannot create the segment: memfd_create: ", strerror(errno), NULL);
		return false;
	}
	if (syscall(SYS_ftruncate, ctp_seg.memfd, (off_t)FIRST_COMMIT) != 0 ||
	    syscall(SYS_fcntl, ctp_seg.memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
		ctp_log("cannot size the segment: ", strerror(errno), NULL);
		return false;
	}
	void *base = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			  ctp_seg.memfd, 0);
	if (base == MAP_FAILED) {
		ctp_log("cannot map the segment: ", strerror(errno), NULL);
		return false;
	}
	ctp_seg.base = base;
	ctp_seg.hdr = base;
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

uint64_t ctp_segment_alloc_block(uint32_t kind, uint64_t size,
				 void (*fill)(void *block, uint64_t off, void *arg), void *arg)
{
	size = (size + CTP_CACHE_LINE - 1) & ~(uint64_t)(CTP_CACHE_LINE - 1);
	lock();
	uint64_t off = (ctp_seg.used + CTP_CACHE_LINE - 1) & ~(uint64_t)(CTP_CACHE_LINE - 1);
	uint64_t end = off + size;
	uint64_t committed = CTP_LOAD_RELAXED(&ctp_seg.hdr->segment_size);
	if (end > ctp_proc.config.segment_max) {
		unlock();
		return 0;
	}
	if (end > committed) {
		uint64_t want = committed * 2 > end ? committed * 2 : end;
		want = (want + GROW_STEP - 1) & ~(uint64_t)(GROW_STEP - 1);
		if (want > ctp_proc.config.segment_max)
			want = ctp_proc.config.segment_max;
		if (!commit(want)) {
			unlock();
			return 0;
		}
	}
	ctp_seg.used = end;
	unlock();

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

bool ctp_segment_fork_child(void)
{
	/* The parent's file is still mapped here and shared with it: copy what it holds into a
	 * file of our own and map that over the very same range, so that every pointer into the
	 * segment stays valid and no write of ours ever reaches the parent's segment. */
	uint64_t committed = ctp_seg.hdr->segment_size;
	int fd = new_memfd();
	if (fd < 0 || syscall(SYS_ftruncate, fd, (off_t)committed) != 0 ||
	    syscall(SYS_fcntl, fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
		return false;
	uint64_t done = 0;
	while (done < committed) {
		ssize_t n = syscall(SYS_pwrite64, fd, ctp_seg.base + done, committed - done,
				    (off_t)done);
		if (n <= 0)
			return false;
		done += (uint64_t)n;
	}
	void *base = mmap(ctp_seg.base, ctp_proc.config.segment_max, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
	if (base != ctp_seg.base)
		return false;
	syscall(SYS_close, ctp_seg.memfd);
	ctp_seg.memfd = fd;
	ctp_seg.lock = 0;
	ctp_seg.hdr->pid = ctp_proc.pid;
	ctp_seg.hdr->sleep_flag = 0;
	ctp_seg.hdr->exit_kind = CTP_EXIT_NONE;
	return true;
}

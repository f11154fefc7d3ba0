/* What libunwind's thread-local cache costs a thread. unw_backtrace keeps a cache of frames per
 * thread through a __thread variable, and libunwind is loaded with dlopen (unwind.c), so that
 * variable is dynamic TLS: glibc allocates a thread's copy with malloc at the thread's first
 * walk, and a thread's first malloc makes glibc give it a malloc arena of its own, 64 MiB of
 * address space (VmSize: its RSS is a few pages; up to 8 arenas a CPU). A program whose threads
 * never call malloc has none untraced. Under an address-space limit (ulimit -v) that room is the
 * program's: six threads switching coroutines under 273 MiB, a limit they run in with 200 MiB to
 * spare untraced, failed to start one in four runs traced (pthread_create: ENOMEM). So where a
 * limit is set, a thread whose copy is not allocated yet walks no stack (said once); the main
 * thread's was allocated at start (ctp_unwind_init), where it costs no arena. */
#define _GNU_SOURCE
#include <link.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/object_range.h"
#include "preload/process.h"
#include "preload/threads.h"
#include "preload/unwind.h"

static int unwinder_tls_allocated(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uint64_t lo, hi;
	if (!ctp_object_range(info, &lo, &hi) || !ctp_called_from_unwinder((const void *)lo))
		return 0;
	/* dlpi_tls_data: this thread's copy, NULL until it is allocated. */
	*(bool *)arg = info->dlpi_tls_modid == 0 || info->dlpi_tls_data != NULL;
	return 1;
}

static bool address_space_limited(void)
{
	struct rlimit as;
	return syscall(SYS_prlimit64, 0, RLIMIT_AS, NULL, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
}

bool ctp_unwinder_tls_decide(struct ctp_thread *t)
{
	bool walks = true;
	if (address_space_limited()) {
		walks = false;
		dl_iterate_phdr(unwinder_tls_allocated, &walks);
	}
	t->unwinder_tls = walks ? CTP_UNWINDER_TLS_WALKS : CTP_UNWINDER_TLS_REFUSED;
	static bool said;
	if (!walks && !__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		ctp_log("suspend stacks are off in threads started under an address-space limit "
			"(ulimit -v): libunwind's per-thread cache would take a 64 MiB malloc "
			"arena "
			"in each",
			NULL, NULL);
	return walks;
}

/* Process-wide start of tracing: configuration from CTP_* variables, the segment, the
 * connection to the collector, and what must be redone in a forked child. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/clock.h"
#include "ctp/segment.h"
#include "preload/autostart.h"
#include "preload/connection.h"
#include "preload/crash.h"
#include "preload/exec_hooks.h"
#include "preload/fork_guard.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/segment.h"
#include "preload/stack_release.h"
#include "preload/stations.h"
#include "preload/threads.h"
#include "preload/unwind.h"

struct ctp_process ctp_proc;

static uint64_t env_u64(const char *name, uint64_t fallback, uint64_t max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return fallback;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v > max) {
		/* As the collector says it: the variable as set, and what it takes. */
		char what[160];
		snprintf(what, sizeof(what), "%s=%.64s: not a number from 0 to %llu", name, s,
			 (unsigned long long)max);
		ctp_log("ignoring ", what, NULL);
		return fallback;
	}
	return v;
}

static uint64_t round_up_pow2(uint64_t v)
{
	uint64_t p = 4096;
	while (p < v)
		p <<= 1;
	return p;
}

static void read_config(struct ctp_config *c)
{
	c->stack_depth =
		(uint32_t)env_u64("CTP_STACK_DEPTH", CTP_DEFAULT_STACK_DEPTH, CTP_MAX_STACK_DEPTH);
	/* Default ("lasting"): a switch records its call site, and stacks are unwound from the
	 * saved context of coroutines that stay suspended (unwind_saved.c, the collector). */
	const char *stacks = getenv("CTP_STACKS");
	c->stacks_every_switch = stacks && strcmp(stacks, "every-switch") == 0;
	if (stacks && !c->stacks_every_switch && strcmp(stacks, "lasting") != 0)
		ctp_log("ignoring CTP_STACKS=", stacks, ": not every-switch or lasting");
	c->ring_bytes = round_up_pow2(env_u64("CTP_RING_KB", 16384, 1u << 20) * 1024);
	c->segment_max = env_u64("CTP_SEGMENT_MAX_MB", 1024, 1u << 20) << 20;
	c->socket_path = getenv("CTP_SOCKET");
	/* Ids continue across exec (see exec_hooks.c): unique within the pid. */
	c->first_coro_id = env_u64("CTP_CORO_BASE", 1, UINT64_MAX / 2);
	if (c->first_coro_id == 0)
		c->first_coro_id = 1;
}

void ctp_process_stop(const char *why)
{
	int expected = CTP_PROC_TRACING;
	if (__atomic_compare_exchange_n(&ctp_proc.state, &expected, CTP_PROC_OFF, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		ctp_log("tracing stopped: ", why, NULL);
}

/* Tracing ends in a child that could not get a segment or a connection of its own. */
static void stop_in_child(void)
{
	__atomic_store_n(&ctp_proc.state, CTP_PROC_OFF, __ATOMIC_RELEASE);
	ctp_tls_thread.state = CTP_THREAD_OFF;
	ctp_segment_release(); /* the child's only thread traces no more */
	ctp_threads_close_maps();
}

static void fork_prepare(void)
{
	ctp_fork_guard_prepare();
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING)
		ctp_segment_fork_prepare();
}

static void fork_parent(void)
{
	ctp_fork_guard_parent();
	/* glibc runs this after a failed fork too: the collector then waits its grace period for
	 * a child that never comes, and loses nothing. */
	ctp_connection_send_forked();
}

static void fork_child(void)
{
	ctp_fork_guard_child();
	if (__atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) != CTP_PROC_TRACING)
		return;
	int saved_errno = errno;
	ctp_proc.forked_from = ctp_proc.pid;
	ctp_proc.pid = (uint32_t)getpid();
	if (!ctp_segment_fork_child()) {
		stop_in_child();
		errno = saved_errno;
		return;
	}
	ctp_stations_fork_child();
	ctp_modules_fork_child();
	ctp_unwind_fork_child();
	ctp_unwind_saved_fork_child();
	ctp_threads_fork_child();
	if (!ctp_connection_open())
		stop_in_child();
	errno = saved_errno;
}

static void initialize(void)
{
	/* Before any call of the dynamic linker's that may fail: the next such call frees the
	 * failure's message, and that free must not need the dynamic linker itself. */
	ctp_free_resolve();
	ctp_log_take_stderr();
	read_config(&ctp_proc.config);
	ctp_proc.pid = (uint32_t)getpid();
	if (!ctp_proc.config.socket_path && !ctp_autostart_collector()) {
		ctp_connection_discard_handover();
		__atomic_store_n(&ctp_proc.state, CTP_PROC_OFF, __ATOMIC_RELEASE);
		return;
	}
	/* The TSC only where the kernel itself trusts it: elsewhere it may drift from
	 * CLOCK_MONOTONIC, or differ between CPUs. */
	ctp_proc.use_tsc = ctp_tsc_is_invariant() && ctp_kernel_trusts_tsc();
	if (!ctp_segment_create()) {
		ctp_connection_discard_handover();
		__atomic_store_n(&ctp_proc.state, CTP_PROC_OFF, __ATOMIC_RELEASE);
		return;
	}
	ctp_modules_scan();
	if (!ctp_connection_open()) {
		ctp_segment_release();
		__atomic_store_n(&ctp_proc.state, CTP_PROC_OFF, __ATOMIC_RELEASE);
		return;
	}
	/* Once connected: a process that runs untraced loads no libunwind, whose pipe would
	 * take two fds of the program's for good (unwind_fds.c), and keeps no fd of /proc. */
	ctp_threads_open_maps();
	if (ctp_proc.config.stack_depth)
		ctp_unwind_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	ctp_crash_handlers_install();
	ctp_exit_status_watch();
	ctp_exec_remember_environment();
	__atomic_store_n(&ctp_proc.state, CTP_PROC_TRACING, __ATOMIC_RELEASE);
}

bool ctp_process_ready(void)
{
	int state = __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(state == CTP_PROC_TRACING, 1))
		return true;
	if (state != CTP_PROC_UNINIT)
		return false; /* off, or being initialised (by this thread, re-entered) */
	int expected = CTP_PROC_UNINIT;
	if (!__atomic_compare_exchange_n(&ctp_proc.state, &expected, CTP_PROC_INITIALIZING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false; /* another thread initialises; its hooks pass through meanwhile */
	/* Starting leaves errno as it found it, traced or not: the program may read it (at main,
	 * as the loader left it) or be inside a call whose errno it is about to read. */
	int saved_errno = errno;
	initialize();
	errno = saved_errno;
	return __atomic_load_n(&ctp_proc.state, __ATOMIC_ACQUIRE) == CTP_PROC_TRACING;
}

/* glibc calls a library's constructors with the program's argc, argv and environment. */
__attribute__((constructor)) static void ctp_preload_constructor(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)envp;
	ctp_proc.argv = argv;
	if (ctp_process_ready())
		ctp_thread_get(); /* the main thread's own stack is a coroutine from the start */
}

/* Per-thread state. Each thread's own stack is a coroutine of kind `thread`; its state lives
 * in initial-exec TLS (the preload is loaded at start, so it has static TLS), reached only
 * through ctp_thread_get, which the compiler may not merge across a context switch. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp/station.h"
#include "preload.h"
#include "real.h"

__thread struct ctp_thread ctp_tls_thread __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg);

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

static void own_stack_range(struct ctp_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uint64_t)addr;
		t->stack_hi = (uint64_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

static bool start_tracing(struct ctp_thread *t)
{
	t->state = CTP_THREAD_BUSY; /* hooks reached from here pass through */
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->current = t->self = CTP_NO_STATION;
	own_stack_range(t);
	t->self = ctp_station_alloc();
	uint64_t coro = ctp_coro_new_id();
	if (t->self == CTP_NO_STATION || !ctp_ring_attach(t, coro)) {
		if (t->self != CTP_NO_STATION)
			ctp_station_free(t->self);
		t->state = CTP_THREAD_OFF;
		return false;
	}
	t->current = t->self;
	ctp_coro_begin(t, t->self, coro, CTP_KIND_THREAD, t->entry_hint, t->stack_lo, t->stack_hi,
		       CTP_STATE_RUNNING, 0);
	ctp_thread_stacks_add(t->self);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, t); /* any non-NULL value makes the destructor run */
	ctp_crash_altstack_for_thread(t);
	t->state = CTP_THREAD_TRACING;
	return true;
}

/* Runs at thread exit (pthread key destructor): the thread's own coroutine ends, its station
 * and ring go back to the pools, its signal stack is given back. Hooks reached after this pass
 * through. */
static void thread_exit(void *arg)
{
	(void)arg;
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING)
		return;
	int saved_errno = errno;
	t->state = CTP_THREAD_BUSY;
	ctp_thread_stacks_remove(t->self);
	ctp_thread_end(t);
	ctp_ring_detach(t);
	ctp_crash_altstack_release(t);
	t->state = CTP_THREAD_OFF;
	errno = saved_errno;
}

__attribute__((noinline, noipa)) struct ctp_thread *ctp_thread_get(void)
{
	struct ctp_thread *t = &ctp_tls_thread;
	/* The empty asm keeps the compiler from assuming anything about the TLS address. */
	__asm__ volatile("" : "+r"(t));
	if (__builtin_expect(t->state == CTP_THREAD_TRACING, 1))
		return t;
	if (t->state != CTP_THREAD_NEW || !ctp_process_ready())
		return NULL;
	int saved_errno = errno; /* a hook that starts a thread keeps the program's errno */
	bool started = start_tracing(t);
	errno = saved_errno;
	return started ? t : NULL;
}

static void end_foreign_thread(uint32_t idx, struct ctp_station *s, void *arg)
{
	struct ctp_thread *t = arg;
	if (idx == t->self || CTP_LOAD_RELAXED(&s->kind) != CTP_KIND_THREAD ||
	    CTP_LOAD_RELAXED(&s->state) == CTP_STATE_EXITED ||
	    CTP_LOAD_RELAXED(&s->state) == CTP_STATE_FREE)
		return;
	ctp_thread_stacks_remove(idx);
	ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->state, CTP_STATE_EXITED);
	ctp_station_write_end(s);
	ctp_station_free(idx);
}

void ctp_threads_fork_child(void)
{
	struct ctp_thread *t = &ctp_tls_thread;
	if (t->state != CTP_THREAD_TRACING)
		return;
	t->tid = (uint32_t)syscall(SYS_gettid);
	/* Only the forking thread lives on in the child. */
	ctp_stations_each(end_foreign_thread, t);
	struct ctp_station *s = ctp_station_at(t->self);
	ctp_station_write_begin(s);
	CTP_STORE_RELAXED(&s->tid, t->tid);
	ctp_station_write_end(s);
	ctp_rings_fork_child(t);
}

/* pthread_create: the new thread's own coroutine appears when it starts, not at its first
 * switch, and names its start routine. */
struct start_args {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_trampoline(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	ctp_tls_thread.entry_hint = (uint64_t)a.fn;
	ctp_thread_get();
	return a.fn(a.arg);
}

CTP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			      void *arg)
{
	CTP_REAL(pthread_create);
	int saved_errno = errno;
	struct start_args *a;
	if (!ctp_process_ready() || !(a = malloc(sizeof(*a)))) {
		errno = saved_errno;
		return real_pthread_create(thread, attr, start, arg);
	}
	a->fn = start;
	a->arg = arg;
	errno = saved_errno;
	int rc = real_pthread_create(thread, attr, thread_trampoline, a);
	if (rc != 0) {
		saved_errno = errno;
		free(a);
		errno = saved_errno;
	}
	return rc;
}

/* The follower thread. It owns the write end of a pipe; closing it is how the reader learns that
 * the trace is over. Signals are handled by the main thread only (the handler just sets a flag
 * the follower polls), so that SIGINT ends ctp-cat through the normal end of reading: outputs
 * still finish their files (the Chrome JSON gets its closing bracket). */
#define _GNU_SOURCE
#include "cat/follow.h"

#include "cat/snapshot_request.h"
#include "cat/trace_writer.h"
#include "ctp/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define POLL_MS 200
#define COPY_SIZE (64u << 10)

struct ctp_cat_follow {
	char *path;
	int pipe_rd, pipe_wr;
	pthread_t thread;
	atomic_bool stop;
	uint64_t snapshot_every_ns; /* 0: ask for none */
	uint64_t next_snapshot_ns;  /* CLOCK_MONOTONIC time of the next request */
	bool told_no_collector;	    /* said once that nobody writes the trace */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

bool ctp_cat_follow_interrupted(void)
{
	return interrupted != 0;
}

static bool should_stop(struct ctp_cat_follow *fl)
{
	return interrupted || atomic_load(&fl->stop);
}

/* Whether some process still has the file open for writing. Unknown (not our file, or a file
 * system without leases) counts as "still written": then the `end` line or a signal ends
 * following. */
static bool writer_present(int fd)
{
	return ctp_cat_trace_writer(fd) != CTP_CAT_WRITER_GONE;
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Copies what the file has now; false when the reader went away or reading failed. */
static bool copy_available(struct ctp_cat_follow *fl, int fd, char *buf)
{
	for (;;) {
		ssize_t n = read(fd, buf, COPY_SIZE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			return true;
		if (!write_all(fl->pipe_wr, buf, (size_t)n))
			return false;
		if (should_stop(fl))
			return true;
	}
}

/* Sleeps until the file may have changed: an inotify event or the poll interval. */
static void wait_for_change(int ino)
{
	if (ino < 0) {
		poll(NULL, 0, POLL_MS);
		return;
	}
	struct pollfd p = {.fd = ino, .events = POLLIN};
	if (poll(&p, 1, POLL_MS) > 0) {
		char events[4096];
		while (read(ino, events, sizeof(events)) > 0)
			;
	}
}

static int open_when_there(struct ctp_cat_follow *fl)
{
	for (;;) {
		int fd = open(fl->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT || should_stop(fl))
			return fd;
		poll(NULL, 0, POLL_MS);
	}
}

/* --snapshot-every: asks the trace's collector for a snapshot when the time has come. A trace
 * without a collector yet (it starts after us) or any more is said once, and asked again. */
static void ask_snapshot_when_due(struct ctp_cat_follow *fl)
{
	uint64_t now = ctp_monotonic_ns();
	if (!fl->snapshot_every_ns || now < fl->next_snapshot_ns)
		return;
	fl->next_snapshot_ns = now + fl->snapshot_every_ns;
	if (ctp_cat_request_snapshot(fl->path) >= 0 || fl->told_no_collector)
		return;
	fl->told_no_collector = true;
	fprintf(stderr, "ctp-cat: %s: cannot ask for a snapshot: %s\n", fl->path,
		errno == ESRCH ? "no ctp-collector is writing it" : strerror(errno));
}

static void *follow_thread(void *arg)
{
	struct ctp_cat_follow *fl = arg;
	char *buf = malloc(COPY_SIZE);
	int fd = buf ? open_when_there(fl) : -1;
	int ino = -1;
	if (fd >= 0) {
		ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ino >= 0 && inotify_add_watch(ino, fl->path, IN_MODIFY | IN_CLOSE_WRITE) < 0) {
			close(ino);
			ino = -1;
		}
	}
	while (fd >= 0 && !should_stop(fl)) {
		ask_snapshot_when_due(fl);
		if (!copy_available(fl, fd, buf))
			break;
		if (!writer_present(fd)) {
			/* The writer is gone: what it wrote before closing is all there is. */
			copy_available(fl, fd, buf);
			break;
		}
		wait_for_change(ino);
	}
	if (ino >= 0)
		close(ino);
	if (fd >= 0)
		close(fd);
	free(buf);
	close(fl->pipe_wr);
	fl->pipe_wr = -1;
	return NULL;
}

struct ctp_trace_reader *ctp_cat_follow_open(const char *path, uint64_t snapshot_every_ns,
					     struct ctp_cat_follow **out)
{
	/* Missing is fine (it will appear); unreadable is an error to say now. */
	if (access(path, R_OK) < 0 && errno != ENOENT)
		return NULL;
	struct ctp_cat_follow *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	int pipefd[2];
	fl->path = strdup(path);
	if (!fl->path || pipe2(pipefd, O_CLOEXEC) < 0) {
		free(fl->path);
		free(fl);
		return NULL;
	}
	fl->pipe_rd = pipefd[0];
	fl->pipe_wr = pipefd[1];
	fl->snapshot_every_ns = snapshot_every_ns;
	atomic_init(&fl->stop, false);

	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A lease that breaks is announced with SIGIO, which would kill us by default. */
	signal(SIGIO, SIG_IGN);

	/* The thread starts with the signals blocked, so that they reach the main thread. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int err = pthread_create(&fl->thread, NULL, follow_thread, fl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(fl->pipe_rd);
		close(fl->pipe_wr);
		free(fl->path);
		free(fl);
		errno = err;
		return NULL;
	}
	struct ctp_trace_reader *r = ctp_trace_reader_from_fd(fl->pipe_rd);
	if (!r) {
		ctp_cat_follow_close(fl);
		errno = ENOMEM;
		return NULL;
	}
	*out = fl;
	return r;
}

bool ctp_cat_follow_idle(const struct ctp_cat_follow *fl)
{
	int pending = 0;
	return ioctl(fl->pipe_rd, FIONREAD, &pending) == 0 && pending == 0;
}

void ctp_cat_follow_close(struct ctp_cat_follow *fl)
{
	if (!fl)
		return;
	atomic_store(&fl->stop, true);
	/* A thread blocked writing into a full pipe gets EPIPE once the read end is gone. */
	close(fl->pipe_rd);
	pthread_join(fl->thread, NULL);
	free(fl->path);
	free(fl);
}

#include "collector/program_waits.h"
#include "collector/schedstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* New threads are looked for this often, while some are followed: a verdict on holding needs
 * the threads that run now, not every short-lived one. */
#define RESCAN_NS 100000000ull

void ctp_program_waits_init(struct ctp_program_waits *w, const char *proc_root)
{
	memset(w, 0, sizeof(*w));
	w->proc = proc_root;
}

void ctp_program_waits_free(struct ctp_program_waits *w)
{
	for (size_t i = 0; i < w->nthreads; i++)
		close(w->threads[i].fd);
	w->nthreads = 0;
}

static bool read_waited(int fd, uint64_t *waited)
{
	struct ctp_cpu_time t;
	if (!ctp_cpu_time_read(fd, &t))
		return false;
	*waited = t.waited;
	return true;
}

static bool followed(const struct ctp_program_waits *w, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == tid && w->threads[i].pid == pid)
			return true;
	return false;
}

static void follow(struct ctp_program_waits *w, uint32_t pid, uint32_t tid)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%" PRIu32 "/schedstat", w->proc, pid,
		 tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct ctp_followed_thread *t = &w->threads[w->nthreads];
	if (!read_waited(fd, &t->waited)) {
		close(fd);
		return;
	}
	t->pid = pid;
	t->tid = tid;
	t->fd = fd;
	w->nthreads++;
}

static void scan(struct ctp_program_waits *w, uint32_t pid)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", w->proc, pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while (w->nthreads < CTP_PROGRAM_WAITS_MAX_THREADS && (e = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(e->d_name, &end, 10);
		if (*end || end == e->d_name || tid > UINT32_MAX)
			continue; /* "." and ".." */
		if (!followed(w, pid, (uint32_t)tid))
			follow(w, pid, (uint32_t)tid);
	}
	closedir(d);
}

static bool traced(const uint32_t *pids, size_t npids, uint32_t pid)
{
	for (size_t i = 0; i < npids; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static void drop(struct ctp_program_waits *w, size_t i)
{
	close(w->threads[i].fd);
	w->threads[i] = w->threads[--w->nthreads];
}

uint64_t ctp_program_waits_read(struct ctp_program_waits *w, const uint32_t *pids, size_t npids,
				uint64_t now)
{
	/* Following nothing, look at every reading: the first threads of a run are wanted at
	 * once, not 100 ms into it. */
	if (w->nthreads == 0 || now - w->scanned_at >= RESCAN_NS) {
		w->scanned_at = now;
		/* An exec'd or ended process's threads are not the program's any more, and their
		 * slots are wanted. */
		for (size_t i = w->nthreads; i-- > 0;)
			if (!traced(pids, npids, w->threads[i].pid))
				drop(w, i);
		for (size_t i = 0; i < npids; i++)
			scan(w, pids[i]);
	}
	for (size_t i = w->nthreads; i-- > 0;) {
		struct ctp_followed_thread *t = &w->threads[i];
		uint64_t waited;
		if (!read_waited(t->fd, &waited)) {
			drop(w, i); /* it ended */
			continue;
		}
		if (waited > t->waited)
			w->total += waited - t->waited;
		t->waited = waited;
	}
	return w->nthreads ? w->total : CTP_WAITED_UNKNOWN;
}

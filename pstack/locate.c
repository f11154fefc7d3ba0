#define _GNU_SOURCE /* F_GET_SEALS */
#include "pstack/locate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctp/atomics.h"

/* Maps the whole file as it is now, read-only, replacing a smaller mapping. */
static bool map_file(int fd, struct ctp_segment_view *v, char *why, size_t why_len)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(why, why_len, "fstat: %s", strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct ctp_header)) {
		snprintf(why, why_len, "a file of %lld bytes", (long long)st.st_size);
		return false;
	}
	if ((uint64_t)st.st_size == v->size)
		return true;
	void *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, why_len, "mmap: %s", strerror(errno));
		return false;
	}
	if (v->base)
		munmap(v->base, v->size);
	v->base = base;
	v->size = (uint64_t)st.st_size;
	return true;
}

enum candidate {
	NOT_OURS,  /* another memfd of the process: not a ctp segment */
	OTHER_PID, /* a ctp segment of another process (the collector holds many) */
	BAD,	   /* a ctp segment we cannot read; `why` says why */
	SEGMENT,   /* the process's own segment, mapped */
};

static enum candidate try_memfd(int fd, pid_t pid, struct pstack_source *out, char *why,
				size_t why_len)
{
	struct ctp_segment_view v = {0};
	char reason[160];
	if (!map_file(fd, &v, reason, sizeof(reason)))
		return NOT_OURS;
	enum candidate result = NOT_OURS;
	const struct ctp_header *h = (const struct ctp_header *)v.base;
	if (h->magic != CTP_MAGIC)
		goto out;
	if (!ctp_view_check_header(&v, reason, sizeof(reason))) {
		snprintf(why, why_len, "its ctp segment cannot be read: %s", reason);
		result = BAD;
		goto out;
	}
	if (h->pid != (uint32_t)pid) {
		result = OTHER_PID;
		goto out;
	}
	/* Without the seal the process could shrink the file under our mapping, and our reads
	 * would fault; the preload always seals it (ctp/CTP.md, "Lifetime of a segment"). */
	int seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		snprintf(why, why_len, "its ctp segment is not sealed against shrinking");
		result = BAD;
		goto out;
	}
	out->memfd = fd;
	out->pid = (uint32_t)pid;
	out->view = v;
	return SEGMENT;
out:
	munmap(v.base, v.size);
	return result;
}

/* From /proc/PID/status: the process a thread id belongs to (Tgid), and whether it has ended
 * but not been reaped (state Z: its files are closed, so it would look untraced). */
static void read_status(pid_t pid, pid_t *tgid, bool *zombie)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	*tgid = pid;
	*zombie = false;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int v;
		char state;
		if (sscanf(line, "State: %c", &state) == 1)
			*zombie = state == 'Z';
		else if (sscanf(line, "Tgid: %d", &v) == 1 && v > 0)
			*tgid = v;
	}
	fclose(f);
}

static enum pstack_exit no_process(pid_t pid, char *why, size_t why_len)
{
	snprintf(why, why_len, "no process %d", (int)pid);
	return PSTACK_EXIT_NO_PROCESS;
}

static enum pstack_exit denied(pid_t pid, char *why, size_t why_len)
{
	snprintf(why, why_len,
		 "permission denied: cannot read the open files of process %d (run ctp-pstack as "
		 "the process's user, or with CAP_SYS_PTRACE)",
		 (int)pid);
	return PSTACK_EXIT_DENIED;
}

enum pstack_exit pstack_locate(pid_t pid, struct pstack_source *out, char *why, size_t why_len)
{
	char path[64];
	memset(out, 0, sizeof(*out));
	out->memfd = -1;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	struct stat st;
	if (pid <= 0 || stat(path, &st) != 0)
		return no_process(pid, why, why_len);
	pid_t tgid;
	bool zombie;
	read_status(pid, &tgid, &zombie);
	if (zombie) {
		snprintf(why, why_len, "process %d has ended (a zombie its parent has not reaped)",
			 (int)pid);
		return PSTACK_EXIT_NO_PROCESS;
	}
	/* A thread's id names its process: the segment carries the process's pid. */
	pid = tgid;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d) {
		if (errno == EACCES || errno == EPERM)
			return denied(pid, why, why_len);
		return no_process(pid, why, why_len);
	}
	enum pstack_exit status = PSTACK_EXIT_NOT_TRACED;
	bool other_pids = false, some_denied = false;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char target[256];
		ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		/* Every memfd is looked at, not only the preload's name for it: the magic and the
		 * header decide. */
		if (strncmp(target, "/memfd:", 7) != 0)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			some_denied |= errno == EACCES || errno == EPERM;
			continue;
		}
		enum candidate c = try_memfd(fd, pid, out, why, why_len);
		if (c == SEGMENT) {
			status = PSTACK_EXIT_OK;
			break;
		}
		close(fd);
		other_pids |= c == OTHER_PID;
		if (c == BAD)
			status = PSTACK_EXIT_BAD_SEGMENT;
	}
	closedir(d);
	if (status != PSTACK_EXIT_NOT_TRACED)
		return status;
	if (some_denied)
		return denied(pid, why, why_len);
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return no_process(pid, why, why_len);
	if (other_pids)
		snprintf(why, why_len,
			 "process %d is not traced itself: it holds the ctp segments of other "
			 "processes (is it ctp-collector?)",
			 (int)pid);
	else
		snprintf(why, why_len,
			 "process %d is not traced by ctp (no ctp segment among its open files): "
			 "start it under ctp-run, or with LD_PRELOAD=libctp_preload.so",
			 (int)pid);
	return PSTACK_EXIT_NOT_TRACED;
}

uint64_t pstack_live_head(struct pstack_source *src)
{
	const struct ctp_header *h = (const struct ctp_header *)src->view.base;
	/* Acquire pairs with the producer's release of the head: the blocks are written, and the
	 * segment_size stored before the push is the one we load next, or a later one. */
	uint64_t head = CTP_LOAD_ACQUIRE(&h->blocks_head);
	uint64_t size = CTP_LOAD_ACQUIRE(&h->segment_size);
	if (size > src->view.size) {
		char why[160];
		if (!map_file(src->memfd, &src->view, why, sizeof(why)))
			fprintf(stderr, "ctp-pstack: cannot follow the segment's growth: %s\n",
				why);
		/* The remap may have moved the mapping: the header moved with it. */
	}
	return head;
}

void pstack_live_close(struct pstack_source *src)
{
	if (src->view.base)
		munmap(src->view.base, src->view.size);
	if (src->memfd >= 0)
		close(src->memfd);
	src->view.base = NULL;
	src->view.size = 0;
	src->memfd = -1;
}

/* See snapshot_request.h. The collector is found through /proc: a process whose name is
 * ctp-collector with a descriptor open for writing on the same file (device and inode), so that
 * no other process ever gets the signal, whatever the path it was opened by. */
#define _GNU_SOURCE
#include "cat/snapshot_request.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COLLECTOR_NAME "ctp-collector"

/* The decimal number `s` is, or -1. */
static long number_of(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return *s && !*end && !errno && v > 0 ? v : -1;
}

static bool is_collector(long pid)
{
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(comm, sizeof(comm), f) != NULL;
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return ok && strcmp(comm, COLLECTOR_NAME) == 0;
}

/* Whether descriptor `fd` of `pid` is open for writing (the "flags:" of its fdinfo, octal). */
static bool open_for_writing(long pid, long fd)
{
	char path[96], line[128];
	snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%ld", pid, fd);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool writing = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long flags;
		if (sscanf(line, "flags: %lo", &flags) == 1) {
			writing = (flags & O_ACCMODE) != O_RDONLY;
			break;
		}
	}
	fclose(f);
	return writing;
}

static bool writes_file(long pid, const struct stat *want)
{
	char dir_path[64];
	snprintf(dir_path, sizeof(dir_path), "/proc/%ld/fd", pid);
	DIR *d = opendir(dir_path);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		long fd = strcmp(e->d_name, "0") == 0 ? 0 : number_of(e->d_name);
		if (fd < 0)
			continue;
		char fd_path[96];
		struct stat st;
		snprintf(fd_path, sizeof(fd_path), "/proc/%ld/fd/%ld", pid, fd);
		found = stat(fd_path, &st) == 0 && st.st_dev == want->st_dev &&
			st.st_ino == want->st_ino && open_for_writing(pid, fd);
	}
	closedir(d);
	return found;
}

pid_t ctp_cat_request_snapshot(const char *path)
{
	struct stat want;
	if (stat(path, &want) < 0)
		return -1;
	DIR *proc = opendir("/proc");
	if (!proc)
		return -1;
	long found = -1;
	struct dirent *e;
	while (found < 0 && (e = readdir(proc))) {
		long pid = number_of(e->d_name);
		if (pid > 0 && is_collector(pid) && writes_file(pid, &want))
			found = pid;
	}
	closedir(proc);
	if (found < 0) {
		errno = ESRCH;
		return -1;
	}
	if (kill((pid_t)found, SIGUSR1) < 0)
		return -1;
	return (pid_t)found;
}

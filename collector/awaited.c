#include "collector/awaited.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctp/xalloc.h"

void ctp_awaited_free(struct ctp_awaited *a)
{
	free(a->pids);
	free(a->forks);
	*a = (struct ctp_awaited){0};
}

void ctp_awaited_add_pid(struct ctp_awaited *a, uint32_t pid)
{
	for (size_t i = 0; i < a->npids; i++)
		if (a->pids[i] == pid)
			return;
	if (a->npids == a->pids_cap) {
		a->pids_cap = a->pids_cap ? 2 * a->pids_cap : 8;
		a->pids = ctp_xrealloc(a->pids, a->pids_cap * sizeof(*a->pids));
	}
	a->pids[a->npids++] = pid;
}

void ctp_awaited_add_forks(struct ctp_awaited *a, uint32_t parent, uint32_t count)
{
	for (size_t i = 0; i < a->nforks; i++)
		if (a->forks[i].parent == parent) {
			a->forks[i].count += count;
			return;
		}
	if (a->nforks == a->forks_cap) {
		a->forks_cap = a->forks_cap ? 2 * a->forks_cap : 8;
		a->forks = ctp_xrealloc(a->forks, a->forks_cap * sizeof(*a->forks));
	}
	a->forks[a->nforks++] = (struct ctp_awaited_forks){parent, count};
}

bool ctp_awaited_hello(struct ctp_awaited *a, uint32_t pid, uint32_t ppid, bool forked)
{
	for (size_t i = 0; i < a->npids; i++)
		if (a->pids[i] == pid) {
			a->pids[i] = a->pids[--a->npids];
			break;
		}
	for (size_t i = 0; forked && i < a->nforks; i++)
		if (a->forks[i].parent == ppid) {
			if (--a->forks[i].count == 0)
				a->forks[i] = a->forks[--a->nforks];
			return true;
		}
	return false;
}

bool ctp_pid_alive(uint32_t pid)
{
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return false;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false; /* gone between the two looks */
	/* "pid (comm) S ...": comm may hold ')', the state follows the last one. */
	char buf[512];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *close = NULL;
	for (char *p = buf; *p; p++)
		if (*p == ')')
			close = p;
	return !(close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
}

bool ctp_awaited_any(struct ctp_awaited *a)
{
	for (size_t i = 0; i < a->npids;) {
		if (ctp_pid_alive(a->pids[i]))
			return true;
		a->pids[i] = a->pids[--a->npids];
	}
	return a->nforks > 0;
}

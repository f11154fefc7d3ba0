/* Processes that may still say hello once every traced process has gone (awaited.c): a child
 * whose parent announced it (FORKED, SPAWNED) but that has not said hello yet, and an image
 * that announced its exec. Without a launcher, the collector finishes at once when none may
 * come, instead of waiting its grace period for them. */
#ifndef CTP_COLLECTOR_AWAITED_H
#define CTP_COLLECTOR_AWAITED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctp_awaited {
	/* Known by pid: started by posix_spawn or vfork, or exec'ing. */
	uint32_t *pids;
	size_t npids, pids_cap;
	/* Fork children that have not said hello, by the pid of the process that forked them
	 * (their hello names it as ppid). Their own pids are not known. */
	struct ctp_awaited_forks {
		uint32_t parent;
		uint32_t count;
	} * forks;
	size_t nforks, forks_cap;
};

void ctp_awaited_free(struct ctp_awaited *a);
/* Whether process pid can still run: it exists and is no zombie. */
bool ctp_pid_alive(uint32_t pid);
void ctp_awaited_add_pid(struct ctp_awaited *a, uint32_t pid);
void ctp_awaited_add_forks(struct ctp_awaited *a, uint32_t parent, uint32_t count);
/* A process said hello: it is no longer awaited. A fork child (`forked`) counts against the
 * forks awaited under `ppid`; false when there were none (the caller then counts it for its
 * parent, still connected). */
bool ctp_awaited_hello(struct ctp_awaited *a, uint32_t pid, uint32_t ppid, bool forked);
/* Whether an awaited process may still say hello: fork children not heard of (their pids
 * unknown, so they may), or a pid that is still alive (and no zombie). Forgets the pids that
 * are gone. */
bool ctp_awaited_any(struct ctp_awaited *a);

#endif

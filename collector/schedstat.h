/* A thread's scheduler totals, from /proc/.../schedstat: the time it ran, and the time it waited
 * for a CPU while runnable. The collector reads its own converting thread's (convert_pacing.h)
 * and the traced program's threads' (program_waits.h). The kernel keeps them where it was built
 * with CONFIG_SCHED_INFO. */
#ifndef CTP_COLLECTOR_SCHEDSTAT_H
#define CTP_COLLECTOR_SCHEDSTAT_H

#include <stdbool.h>
#include <stdint.h>

/* A thread's scheduler totals, in ns. */
struct ctp_cpu_time {
	uint64_t ran, waited;
};

/* Opens the calling thread's scheduler totals; -1 where the kernel does not keep them. */
int ctp_cpu_time_open(void);
/* Reads a thread's totals from fd (a schedstat file); false when they cannot be read, as when
 * the thread has ended. */
bool ctp_cpu_time_read(int fd, struct ctp_cpu_time *t);

#endif

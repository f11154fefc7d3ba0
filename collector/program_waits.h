/* How long the traced program's threads have waited for a CPU: the sign that the collector is
 * taking CPUs from the program (collector/convert_pacing.h decides by it whether to hold back).
 *
 * The kernel keeps, for each thread, the time it spent runnable but not running
 * (/proc/PID/task/TID/schedstat, second field). Beside a one-thread program on two CPUs that
 * stays near zero while the collector converts (0.1-0.5 ms in 200 ms); with two program threads
 * on two CPUs it is as long as the collector runs, or longer (70-260 ms in 200 ms). The run
 * queues (/proc/loadavg) could not tell these apart: they counted a third runnable thread in
 * both.
 *
 * The threads are found by listing /proc/PID/task at most every RESCAN_NS (at every reading
 * while none is followed), and each one's file stays open while the thread lives, so a reading
 * is one pread a thread. At most
 * CTP_PROGRAM_WAITS_MAX_THREADS threads are followed: a sample, in a program with more. A
 * thread counts from when it is found; what it waited before, and the waits of threads that
 * ended, are neither counted nor taken back, so the total never goes down. */
#ifndef CTP_COLLECTOR_PROGRAM_WAITS_H
#define CTP_COLLECTOR_PROGRAM_WAITS_H

#include <stddef.h>
#include <stdint.h>

#define CTP_PROGRAM_WAITS_MAX_THREADS 64
#define CTP_WAITED_UNKNOWN UINT64_MAX

struct ctp_followed_thread {
	uint32_t pid, tid;
	int fd;		 /* its schedstat */
	uint64_t waited; /* its total at the last reading */
};

struct ctp_program_waits {
	struct ctp_followed_thread threads[CTP_PROGRAM_WAITS_MAX_THREADS];
	size_t nthreads;
	uint64_t total;	     /* ns waited by the followed threads while followed */
	uint64_t scanned_at; /* when /proc/PID/task was last listed */
	const char *proc;    /* "/proc", or another root for tests */
};

void ctp_program_waits_init(struct ctp_program_waits *w, const char *proc_root);
void ctp_program_waits_free(struct ctp_program_waits *w);

/* The total waits so far of the threads of processes `pids` (now: a monotonic time, in ns);
 * CTP_WAITED_UNKNOWN when none of their threads could be read. */
uint64_t ctp_program_waits_read(struct ctp_program_waits *w, const uint32_t *pids, size_t npids,
				uint64_t now);

#endif

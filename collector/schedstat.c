#include "collector/schedstat.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

int ctp_cpu_time_open(void)
{
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	struct ctp_cpu_time t;
	if (fd >= 0 && !ctp_cpu_time_read(fd, &t)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

bool ctp_cpu_time_read(int fd, struct ctp_cpu_time *t)
{
	/* "ran waited timeslices\n", all since the thread began; ns. */
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return sscanf(buf, "%" SCNu64 " %" SCNu64, &t->ran, &t->waited) == 2;
}

/* Prints which fds above 2 it was started with, and whether CTP_CONNECTION_FD is in its
 * environment. Built dynamic (fd_probe, made set-user-ID by a case) and static
 * (fd_probe_static): programs that cannot load the preload, which a traced process must not
 * hand anything of the tracer's. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		perror("fd_probe: /proc/self/fd");
		return 2;
	}
	printf("fd_probe: fds above 2:");
	int listed = 0;
	for (struct dirent *e; (e = readdir(d));) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d)) {
			printf(" %d", fd);
			listed++;
		}
	}
	closedir(d);
	printf("%s, CTP_CONNECTION_FD %s\n", listed ? "" : " none",
	       getenv("CTP_CONNECTION_FD") ? "set" : "unset");
	return 0;
}

/* Linked statically, so that the loader cannot take the preload into it: says so on stdout,
 * then, given `[--sleep-ms N] --exec PROGRAM ARGS`, waits N ms and runs PROGRAM (which is
 * traced: an untraced step between a traced process and the next); else exits with 3. As a
 * script's interpreter it is given the script's path, and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	puts("static_exec runs");
	fflush(stdout);
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "--sleep-ms") == 0) {
		long ms = atol(argv[i + 1]);
		struct timespec wait = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
		nanosleep(&wait, NULL);
		i += 2;
	}
	if (i + 1 >= argc || strcmp(argv[i], "--exec") != 0)
		return 3;
	execv(argv[i + 1], argv + i + 1);
	perror("static_exec: execv");
	return 127;
}

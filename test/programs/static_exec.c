/* Linked statically, so that the loader cannot take the preload into it: says so on stdout,
 * then, given `--exec PROGRAM ARGS`, runs PROGRAM (which is traced); else exits with 3. As a
 * script's interpreter it is given the script's path, and exits. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	puts("static_exec runs");
	fflush(stdout);
	if (argc < 3 || strcmp(argv[1], "--exec") != 0)
		return 3;
	execv(argv[2], argv + 2);
	perror("static_exec: execv");
	return 127;
}

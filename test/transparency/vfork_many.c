/* vfork 8b: vfork + exec /bin/true 300 times; prints whether the program's own VmSize grew by
 * more than 256 KiB over them ("grew"), else "stable". */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

extern char **environ;

int main(void)
{
	tp_touch_coroutine();
	fflush(stdout);
	long before = tp_vm_size_kb();
	int failed = 0;
	for (int i = 0; i < 300; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			char *argv[] = {"/bin/true", NULL};
			execve(argv[0], argv, environ);
			_exit(127);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed++;
	}
	long after = tp_vm_size_kb();
	printf("300 vfork+exec of /bin/true, %d failed\n", failed);
	printf("VmSize %s\n", after - before > 256 ? "grew" : "stable");
	if (after - before > 256)
		fprintf(stderr, "VmSize %ld kB -> %ld kB\n", before, after);
	return 0;
}

/* The largest environment the kernel takes (E2BIG past it), found by starting /bin/true with
 * environments of N bytes (in variables of 100,000 bytes, the program's own: no tracing
 * variable among them), by fork + execve and by posix_spawn, and printed. A tracer that adds its
 * variables must not make that limit smaller. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

enum { VAR_BYTES = 100000, VARS_MAX = 64 };

static char *envp[VARS_MAX + 1];

/* envp: `total` bytes of strings "Xy=aaa...". */
static void make_environment(size_t total)
{
	int k = 0;
	for (size_t left = total; left > 3 && k < VARS_MAX; k++) {
		size_t n = left < VAR_BYTES ? left : VAR_BYTES;
		char *v = realloc(envp[k], n + 1);
		memset(v, 'a', n);
		v[0] = (char)('A' + k % 26);
		v[1] = (char)('a' + k / 26);
		v[2] = '=';
		v[n] = 0;
		envp[k] = v;
		left -= n;
	}
	envp[k] = NULL;
}

static bool starts(bool spawn, size_t total)
{
	make_environment(total);
	char *argv[] = {"/bin/true", NULL};
	pid_t pid;
	if (spawn) {
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, envp) != 0)
			return false;
	} else {
		pid = fork();
		if (pid == 0) {
			execve("/bin/true", argv, envp);
			_exit(errno == E2BIG ? 100 : 101);
		}
	}
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void largest(bool spawn)
{
	size_t lo = 1000000, hi = 2200000; /* starts with lo, not with hi */
	if (!starts(spawn, lo) || starts(spawn, hi)) {
		printf("%s: the limit is not between %zu and %zu\n",
		       spawn ? "posix_spawn" : "execve", lo, hi);
		return;
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		*(starts(spawn, mid) ? &lo : &hi) = mid;
	}
	printf("%s: largest environment %zu bytes\n", spawn ? "posix_spawn" : "execve", lo);
}

int main(void)
{
	tp_touch_coroutine();
	largest(false);
	largest(true);
	return 0;
}

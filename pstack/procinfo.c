#include "pstack/procinfo.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctp/core_file.h"

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len);
	close(fd);
	return n;
}

void pstack_procinfo_read(pid_t pid, struct pstack_procinfo *out)
{
	memset(out, 0, sizeof(*out));
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, out->strings, sizeof(out->strings) / 2);
	out->len = n > 0 ? (size_t)n : 0;
	out->strings[out->len++] = '\0';

	/* The arguments follow the path in `strings`, as the hello message carries them. */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	char *args = out->strings + out->len;
	n = read_file(path, args, sizeof(out->strings) - out->len - 1);
	if (n > 0) {
		/* A cut last argument is ended here. */
		if (args[n - 1] != '\0')
			args[n++] = '\0';
		for (ssize_t i = 0; i < n; i++)
			out->argc += args[i] == '\0';
		out->len += (size_t)n;
		size_t c = 0;
		for (ssize_t i = 0; i + 1 < n && c + 1 < sizeof(out->command); i++)
			out->command[c++] = args[i] ? args[i] : ' ';
		out->command[c] = '\0';
	}

	/* The parent is the 4th field of stat, after the command name in parentheses (which may
	 * hold anything, parentheses too: the last ')' ends it). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char stat[1024];
	n = read_file(path, stat, sizeof(stat) - 1);
	if (n > 0) {
		stat[n] = '\0';
		const char *end = strrchr(stat, ')');
		char state;
		unsigned ppid;
		if (end && sscanf(end + 1, " %c %u", &state, &ppid) == 2)
			out->ppid = ppid;
	}
}

void pstack_procinfo_from_core(const struct ctp_core *core, const char *executable,
			       struct pstack_procinfo *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->command, sizeof(out->command), "%s", core->psargs);
	size_t len = executable ? strlen(executable) : 0;
	if (len >= sizeof(out->strings) / 2)
		len = 0;
	memcpy(out->strings, executable, len);
	out->len = len + 1; /* and its NUL */
	/* The arguments, one per word, NUL-terminated as /proc/PID/cmdline has them. */
	for (const char *a = core->psargs; *a;) {
		size_t n = strcspn(a, " ");
		if (n > 0 && out->len + n + 1 <= sizeof(out->strings)) {
			memcpy(out->strings + out->len, a, n);
			out->len += n + 1;
			out->argc++;
		}
		a += n;
		a += strspn(a, " ");
	}
	out->ppid = core->ppid;
}

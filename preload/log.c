/* The preload's messages, on the stderr the program started with and only there. A program may
 * close fd 2 and get that number for a file or a socket of its own (a daemon's data file, a
 * client's connection): a message written there would land in its data. So fd 2's identity
 * (device and inode) is taken as the preload starts, and a message is written only while fd 2
 * is still that file. Without stdio or malloc: usable from any hook. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/own_fds.h"
#include "preload/process.h"

static struct {
	bool taken; /* by ctp_log_take_stderr */
	bool open;  /* fd 2 was open then */
	uint64_t dev, ino;
} start_stderr;

void ctp_log_take_stderr(void)
{
	start_stderr.open = ctp_fd_identity(2, &start_stderr.dev, &start_stderr.ino);
	start_stderr.taken = true;
}

/* Whether fd 2 is the file it was when the preload started (before that: as the program was
 * given it). */
static bool stderr_as_at_start(void)
{
	uint64_t dev, ino;
	return !start_stderr.taken || (start_stderr.open && ctp_fd_identity(2, &dev, &ino) &&
				       dev == start_stderr.dev && ino == start_stderr.ino);
}

void ctp_log(const char *a, const char *b, const char *c)
{
	const char *parts[] = {"ctp: ", a, b, c, "\n"};
	int saved = errno;
	if (stderr_as_at_start())
		for (unsigned i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
			if (parts[i])
				(void)!syscall(SYS_write, 2, parts[i], strlen(parts[i]));
	errno = saved;
}

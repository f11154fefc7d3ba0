/* The kernel grants a read lease on a file only while no process has it open for writing
 * (fcntl(2), F_SETLEASE): asking for one, and giving it back at once, tells whether a writer is
 * there without knowing who it is. */
#define _GNU_SOURCE
#include "cat/trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

enum ctp_cat_writer ctp_cat_trace_writer(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return CTP_CAT_WRITER_GONE;
	}
	return errno == EAGAIN ? CTP_CAT_WRITER_PRESENT : CTP_CAT_WRITER_UNKNOWN;
}

enum ctp_cat_writer ctp_cat_trace_writer_at(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return CTP_CAT_WRITER_UNKNOWN;
	enum ctp_cat_writer w = ctp_cat_trace_writer(fd);
	close(fd);
	return w;
}

/* Debug files fetched by build-id from the debuginfod servers DEBUGINFOD_URLS names (elfutils'
 * client, with its cache under $XDG_CACHE_HOME/debuginfod_client): how Debian's stripped binaries
 * get their function names and lines when no -dbgsym package is installed. */
#include "ctp/symbolize_internal.h"

#include <elfutils/debuginfod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool ctp_debuginfod_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls != NULL && urls[strspn(urls, " ")] != '\0';
}

bool ctp_debuginfod_open(struct ctp_elf_file *f, const uint8_t *id, size_t id_len,
			 const char *module_path)
{
	f->fd = -1;
	f->elf = NULL;
	if (id_len == 0 || !ctp_debuginfod_wanted())
		return false;
	debuginfod_client *client = debuginfod_begin();
	if (client == NULL)
		return false;
	/* A fetch can take seconds: say what is being waited for. */
	fprintf(stderr, "ctp: asking debuginfod for the debug info of %s\n", module_path);
	char *path = NULL;
	int fd = debuginfod_find_debuginfo(client, id, (int)id_len, &path);
	debuginfod_end(client);
	if (fd < 0) {
		fprintf(stderr, "ctp: debuginfod has no debug info for %s (%s)\n", module_path,
			strerror(-fd));
		free(path);
		return false;
	}
	close(fd); /* the cached file is opened like any other, and checked the same way */
	bool ok = ctp_elf_file_open(f, path);
	free(path);
	const uint8_t *own;
	if (ok && (ctp_elf_build_id(f->elf, &own) != id_len || memcmp(own, id, id_len) != 0)) {
		ctp_elf_file_close(f);
		ok = false;
	}
	return ok;
}

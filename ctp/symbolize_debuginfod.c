/* Debug files fetched by build-id from the debuginfod servers DEBUGINFOD_URLS names (elfutils'
 * client, with its cache under $XDG_CACHE_HOME/debuginfod_client): how Debian's stripped binaries
 * get their function names and lines when no -dbgsym package is installed. */
#include "ctp/symbolize_internal.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool ctp_debuginfod_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls != NULL && urls[strspn(urls, " ")] != '\0';
}

/* The client library is loaded on the first fetch, not linked: it brings libcurl, GnuTLS and
 * Kerberos along, some 35 libraries whose loading and relocation cost every ctp-run and
 * ctp-cat about 20 ms of start-up, needed only where DEBUGINFOD_URLS is set. */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} client_lib;

static void load_client_lib(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		client_lib.begin = (debuginfod_client * (*)(void)) dlsym(h, "debuginfod_begin");
		client_lib.find_debuginfo =
			(int (*)(debuginfod_client *, const unsigned char *, int, char **))dlsym(
				h, "debuginfod_find_debuginfo");
		client_lib.end = (void (*)(debuginfod_client *))dlsym(h, "debuginfod_end");
	}
	if (!client_lib.begin || !client_lib.find_debuginfo || !client_lib.end) {
		fprintf(stderr,
			"ctp: DEBUGINFOD_URLS is set, but elfutils' debuginfod client cannot be "
			"loaded (%s): install libdebuginfod1 to fetch debug info\n",
			h ? "a function is missing" : dlerror());
		client_lib.begin = NULL;
	}
}

bool ctp_debuginfod_open(struct ctp_elf_file *f, const uint8_t *id, size_t id_len,
			 const char *module_path)
{
	f->fd = -1;
	f->elf = NULL;
	if (id_len == 0 || !ctp_debuginfod_wanted())
		return false;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, load_client_lib);
	if (!client_lib.begin)
		return false;
	debuginfod_client *client = client_lib.begin();
	if (client == NULL)
		return false;
	/* A fetch can take seconds: say what is being waited for. */
	fprintf(stderr, "ctp: asking debuginfod for the debug info of %s\n", module_path);
	char *path = NULL;
	int fd = client_lib.find_debuginfo(client, id, (int)id_len, &path);
	client_lib.end(client);
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

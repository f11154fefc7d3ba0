/* Finding things for ctp-run: its own parts beside its executable, the program the way execvp
 * will find it, and a private run directory. */
#define _GNU_SOURCE
#include "collector/run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctp/run_dir_base.h"

#define CTP_COLLECTOR_NAME "ctp-collector"
#define CTP_PRELOAD_NAME "libctp_preload.so"

/* Library directories relative to the launcher's directory: the build tree (BUILD/collector
 * beside BUILD/preload: first, as no installed layout has it, so that a build tree never takes an
 * installed preload), the installed layout (the preload's own directory under the library
 * directory, as configured), then older layouts (PREFIX/bin beside PREFIX/<libdir>, as
 * GNUInstallDirs names it here, then the usual multiarch, lib64 and lib). */
static const char *const preload_dirs[] = {
	"../preload",
	CTP_BIN_TO_PKGLIB,
	"../" CTP_INSTALL_LIBDIR,
#ifdef CTP_LIBRARY_ARCH
	"../lib/" CTP_LIBRARY_ARCH,
#endif
	"../lib64",
	"../lib",
};

static char *self_dir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "ctp-run: cannot read /proc/self/exe: %s\n", strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	return strdup(exe);
}

static char *join(const char *dir, const char *rel, const char *name)
{
	char *p = NULL;
	if (rel[0] == '/') /* an absolute libdir given at configure time */
		return asprintf(&p, "%s/%s", rel, name) < 0 ? NULL : p;
	return asprintf(&p, "%s/%s/%s", dir, rel, name) < 0 ? NULL : p;
}

/* The canonical form of `path` if it exists with `mode` access, else NULL. */
static char *usable(const char *path, int mode)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, mode) != 0)
		return NULL;
	return realpath(path, NULL);
}

static void print_tried(const char *what, char *const *tried, size_t n)
{
	fprintf(stderr, "ctp-run: cannot find %s; looked for:\n", what);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  %s\n", tried[i]);
}

bool ctp_run_find_parts(char **collector, char **preload)
{
	*collector = *preload = NULL;
	char *dir = self_dir();
	if (dir == NULL)
		return false;

	char *collector_path = NULL;
	if (asprintf(&collector_path, "%s/%s", dir, CTP_COLLECTOR_NAME) < 0)
		collector_path = NULL;
	*collector = collector_path ? usable(collector_path, X_OK) : NULL;
	if (*collector == NULL)
		print_tried(CTP_COLLECTOR_NAME, &collector_path, 1);
	free(collector_path);

	size_t n = sizeof(preload_dirs) / sizeof(preload_dirs[0]);
	char *tried[sizeof(preload_dirs) / sizeof(preload_dirs[0])] = {0};
	size_t ntried = 0;
	for (size_t i = 0; i < n && *preload == NULL; i++) {
		char *candidate = join(dir, preload_dirs[i], CTP_PRELOAD_NAME);
		bool seen = candidate == NULL;
		for (size_t k = 0; k < ntried && !seen; k++) /* the libdir may be "lib" */
			seen = strcmp(tried[k], candidate) == 0;
		if (seen) {
			free(candidate);
			continue;
		}
		tried[ntried++] = candidate;
		*preload = usable(candidate, R_OK);
	}
	if (*preload == NULL)
		print_tried(CTP_PRELOAD_NAME, tried, ntried);
	for (size_t i = 0; i < ntried; i++)
		free(tried[i]);
	free(dir);

	/* The dynamic loader splits LD_PRELOAD at spaces and colons. */
	if (*preload != NULL && strpbrk(*preload, " :") != NULL) {
		fprintf(stderr, "ctp-run: %s: a space or colon in the path breaks LD_PRELOAD\n",
			*preload);
		free(*preload);
		*preload = NULL;
	}
	if (*collector == NULL || *preload == NULL) {
		free(*collector);
		free(*preload);
		*collector = *preload = NULL;
		return false;
	}
	return true;
}

/* Why `path` cannot be executed (0 if it can): what execve would say. */
static int exec_problem(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return EACCES;
	return 0;
}

int ctp_run_check_program(const char *program, char **found)
{
	*found = NULL;
	if (program[0] == '\0') {
		fprintf(stderr, "ctp-run: '': command not found\n");
		return CTP_RUN_EXIT_NOT_FOUND;
	}
	if (strchr(program, '/') != NULL) {
		int err = exec_problem(program);
		if (err == 0)
			return (*found = strdup(program)) ? 0 : CTP_RUN_EXIT_FAILURE;
		fprintf(stderr, "ctp-run: %s: %s\n", program, strerror(err));
		return err == ENOENT || err == ENOTDIR ? CTP_RUN_EXIT_NOT_FOUND
						       : CTP_RUN_EXIT_NOT_EXECUTABLE;
	}
	/* execvp's search: PATH entries in order, an empty entry meaning the current directory,
	 * the system default when PATH is unset; a file found but not executable is remembered
	 * and reported if nothing better comes later. */
	const char *path = getenv("PATH");
	char default_path[256];
	if (path == NULL) {
		size_t n = confstr(_CS_PATH, default_path, sizeof(default_path));
		path = n > 0 && n <= sizeof(default_path) ? default_path : "/bin:/usr/bin";
	}
	int denied = 0;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		char *candidate = NULL;
		int len = (int)(end - p);
		if (asprintf(&candidate, "%.*s%s%s", len, p, len ? "/" : "", program) < 0)
			break;
		int err = exec_problem(candidate);
		if (err == 0) {
			*found = candidate;
			return 0;
		}
		free(candidate);
		if (err == EACCES || err == EISDIR)
			denied = err;
		if (*end == '\0')
			break;
		p = end;
	}
	if (denied != 0) {
		fprintf(stderr, "ctp-run: %s: %s\n", program, strerror(denied));
		return CTP_RUN_EXIT_NOT_EXECUTABLE;
	}
	fprintf(stderr, "ctp-run: %s: command not found\n", program);
	return CTP_RUN_EXIT_NOT_FOUND;
}

char *ctp_run_make_dir(void)
{
	const char *bases[CTP_RUN_DIR_BASES];
	size_t count = ctp_run_dir_bases(bases);
	struct sockaddr_un sun;
	int last_err = 0;
	for (size_t i = 0; i < count; i++) {
		const char *base = bases[i];
		char *dir = NULL;
		/* Named by this process, so that a later run can tell it was left behind. */
		if (asprintf(&dir, "%s/ctp-run.%d.XXXXXX", base, (int)getpid()) < 0)
			return NULL;
		/* <dir>/sock must fit in sun_path, with its terminating NUL. */
		if (strlen(dir) + sizeof("/sock") > sizeof(sun.sun_path)) {
			last_err = ENAMETOOLONG;
			free(dir);
			continue;
		}
		ctp_run_sweep_stale_dirs(base);
		if (mkdtemp(dir) == NULL) {
			last_err = errno;
			free(dir);
			continue;
		}
		return dir;
	}
	fprintf(stderr, "ctp-run: cannot make a run directory: %s\n", strerror(last_err));
	return NULL;
}

void ctp_run_remove_dir(const char *dir)
{
	char *sock = NULL;
	if (asprintf(&sock, "%s/sock", dir) >= 0) {
		unlink(sock); /* the collector may have removed it already */
		free(sock);
	}
	if (rmdir(dir) != 0)
		fprintf(stderr, "ctp-run: cannot remove %s: %s\n", dir, strerror(errno));
}

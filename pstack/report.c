#define _GNU_SOURCE /* pipe2 */
#include "pstack/report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctp/zwriter.h"

/* ctp-cat beside this program (installed), or in the build tree's cat/ (pstack/../cat). */
static bool find_cat(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = '\0';
	static const char *const places[] = {"%s/ctp-cat", "%s/../cat/ctp-cat"};
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		if (snprintf(out, len, places[i], self) < (int)len && access(out, X_OK) == 0)
			return true;
	}
	return false;
}

int pstack_report(struct pstack_view *v, const struct pstack_procinfo *pi, bool json)
{
	char cat[PATH_MAX + 32];
	if (!find_cat(cat, sizeof(cat))) {
		fputs("ctp-pstack: --report needs ctp-cat, installed beside ctp-pstack; not "
		      "found\n",
		      stderr);
		return -1;
	}
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		fprintf(stderr, "ctp-pstack: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "ctp-pstack: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (child == 0) {
		if (dup2(fds[0], STDIN_FILENO) < 0)
			_exit(127);
		char *argv[5] = {cat, "--report"};
		size_t n = 2;
		if (json)
			argv[n++] = "--json";
		else if (v->full_names)
			argv[n++] = "--full-names";
		argv[n++] = "-";
		argv[n] = NULL;
		execv(cat, argv);
		fprintf(stderr, "ctp-pstack: cannot run %s: %s\n", cat, strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	/* A ctp-cat that stops reading early must not kill us with SIGPIPE: the write fails. */
	signal(SIGPIPE, SIG_IGN);
	struct ctp_zwriter *z = ctp_zwriter_open_fd(fds[1], "(pipe to ctp-cat)", 1);
	if (z) {
		pstack_write_trace(v, pi, z);
		ctp_zwriter_close(z, NULL);
	} else {
		fprintf(stderr, "ctp-pstack: cannot write to ctp-cat: %s\n", strerror(errno));
	}
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
	fprintf(stderr, "ctp-pstack: ctp-cat was killed by signal %d\n", WTERMSIG(status));
	return -1;
}

/* ctp-run: traces one program from start to end.
 *
 *   ctp-run [-o FILE] [--stack-depth N] [--] PROGRAM [ARGS...]
 *
 * The sequence: check that PROGRAM can be run (before anything is started for it) and warn if
 * the loader would keep the preload out of it, find the collector and the preload beside this
 * executable, make a private run directory, start the collector on a socket in it and wait
 * until it says it is ready, open the control connection, start the app with the preload,
 * forward signals to it, wait for it, tell the collector how it ended, let the collector finish,
 * clean up, and exit as the app did. The app comes first: the collector's troubles are reported
 * but never change the app's run or the exit status. */
#define _GNU_SOURCE
#include "collector/run.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctp/close_fds.h"
#include "ctp/segment.h"
#include "ctp/version.h"
#include "ctp/wire.h"

#define CTP_RUN_DEFAULT_OUTPUT "trace.jsonl.zst"
#define CTP_RUN_READY_TIMEOUT_MS 10000 /* for the collector's "ready" */
#define CTP_RUN_STOP_GRACE_MS 2000     /* between SIGTERM and SIGKILL for a collector that failed */

struct run_options {
	const char *output;
	int stack_depth; /* -1: not given, the preload's default applies */
	char **argv;	 /* PROGRAM and its arguments */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ctp-run [-o FILE] [--stack-depth N] [--stacks MODE] [--] PROGRAM "
		"[ARGS...]\n"
		"\n"
		"Runs PROGRAM with the ctp tracer and writes its trace (zstd-compressed JSON\n"
		"Lines) to FILE. Exits with PROGRAM's exit status, or dies of the signal that\n"
		"killed it (without a core of its own); 126/127 if PROGRAM cannot be run; 125 if\n"
		"ctp-run itself fails (a usage error, the trace file cannot be created, the\n"
		"tracer cannot start).\n"
		"\n"
		"  -o, --output FILE    trace file (default " CTP_RUN_DEFAULT_OUTPUT
		"), made with\n"
		"                       mode 0600; an existing FILE is renamed to FILE.old\n"
		"                       first; a symbolic link is refused\n"
		"      --stack-depth N  frames kept per suspended stack, 0..%u (0: none;\n"
		"                       default %u)\n"
		"      --stacks MODE    when whole suspend stacks are unwound: 'lasting'\n"
		"                       (default: every switch records its call site; a\n"
		"                       coroutine's first suspend at each place, and every\n"
		"                       suspend that lasts, get the whole stack) or\n"
		"                       'every-switch' (the whole stack on every switch:\n"
		"                       about 90 ns more per switch)\n"
		"  -h, --help           show this help\n"
		"      --version        show the version\n",
		CTP_MAX_STACK_DEPTH, CTP_DEFAULT_STACK_DEPTH);
}

/* Returns -1 to go on, else the exit status. Options end at the first non-option (the
 * program's own options are not ours) or at "--". */
static int parse_args(int argc, char **argv, struct run_options *o)
{
	enum { OPT_STACK_DEPTH = 256, OPT_STACKS, OPT_VERSION };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"stack-depth", required_argument, NULL, OPT_STACK_DEPTH},
		{"stacks", required_argument, NULL, OPT_STACKS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	o->output = CTP_RUN_DEFAULT_OUTPUT;
	o->stack_depth = -1;
	int c;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (optarg[0] == '\0') {
				fprintf(stderr, "ctp-run: empty output file name\n");
				return CTP_RUN_EXIT_FAILURE;
			}
			o->output = optarg;
			break;
		case OPT_STACK_DEPTH: {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || v < 0 ||
			    v > (long)CTP_MAX_STACK_DEPTH) {
				fprintf(stderr, "ctp-run: --stack-depth wants 0..%u, not '%s'\n",
					CTP_MAX_STACK_DEPTH, optarg);
				return CTP_RUN_EXIT_FAILURE;
			}
			o->stack_depth = (int)v;
			break;
		}
		case OPT_STACKS:
			if (strcmp(optarg, "lasting") != 0 && strcmp(optarg, "every-switch") != 0) {
				fprintf(stderr,
					"ctp-run: --stacks wants lasting or every-switch, not "
					"'%s'\n",
					optarg);
				return CTP_RUN_EXIT_FAILURE;
			}
			/* Read by the preload in the program (and ignored by the collector). */
			setenv("CTP_STACKS", optarg, 1);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("%s\n", ctp_version_string());
			return 0;
		default:
			fprintf(stderr, "Try 'ctp-run --help'.\n");
			return CTP_RUN_EXIT_FAILURE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CTP_RUN_EXIT_FAILURE;
	}
	o->argv = argv + optind;
	return -1;
}

static void describe_status(char *buf, size_t size, int status)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "ended with wait status 0x%x", (unsigned)status);
}

static pid_t wait_eintr(pid_t pid, int *status, int flags)
{
	pid_t r;
	do
		r = waitpid(pid, status, flags);
	while (r < 0 && errno == EINTR);
	return r;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to `ms` for `pid` to end and reaps it; true if it has ended (or was reaped). */
static bool wait_exit_within(pid_t pid, int64_t ms, int *status)
{
	int64_t deadline = now_ms() + ms;
	for (;;) {
		if (wait_eintr(pid, status, WNOHANG) != 0)
			return true;
		if (now_ms() >= deadline)
			return false;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000000}, NULL);
	}
}

/* For a collector that failed to start: ask it to stop, then make it. Reaps it. */
static void stop_collector(pid_t pid)
{
	int status;
	if (wait_eintr(pid, &status, WNOHANG) != 0)
		return; /* already ended (or already reaped: never signal a pid we do not own) */
	kill(pid, SIGTERM);
	if (wait_exit_within(pid, CTP_RUN_STOP_GRACE_MS, &status))
		return;
	kill(pid, SIGKILL);
	wait_eintr(pid, &status, 0);
}

/* Waits for the collector to write "ready\n" on `fd`. On failure says why; the caller stops
 * the collector. */
static bool wait_ready(int fd, pid_t collector)
{
	char buf[64];
	size_t have = 0;
	int64_t deadline = now_ms() + CTP_RUN_READY_TIMEOUT_MS;
	for (;;) {
		if (ctp_run_signals_pending() != 0)
			return false;
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			fprintf(stderr, "ctp-run: ctp-collector did not get ready within %d s\n",
				CTP_RUN_READY_TIMEOUT_MS / 1000);
			return false;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "ctp-run: poll: %s\n", strerror(errno));
			return false;
		}
		if (r <= 0)
			continue;
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			have += (size_t)n;
			buf[have] = '\0';
			if (strstr(buf, "ready\n") != NULL)
				return true;
			if (have < sizeof(buf) - 1)
				continue;
		}
		/* End of file, an error, or a full buffer without "ready": it will not come. */
		int status = 0;
		char how[96];
		if (n == 0 && wait_exit_within(collector, CTP_RUN_STOP_GRACE_MS, &status)) {
			describe_status(how, sizeof(how), status);
			fprintf(stderr, "ctp-run: ctp-collector %s before it was ready\n", how);
		} else {
			fprintf(stderr, "ctp-run: ctp-collector did not report ready\n");
		}
		return false;
	}
}

/* Starts `ctp-collector --socket SOCK --output FILE --ready-fd N --summary` in its own process
 * group (so a Ctrl-C meant for the app does not cut the trace short: the collector finishes
 * when the launcher tells it to) and waits until it is ready. Returns its pid, or -1. */
static pid_t start_collector(const char *collector, const char *sock, const char *output)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0) {
		fprintf(stderr, "ctp-run: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ctp-run: fork: %s\n", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid == 0) {
		ctp_run_signals_reset_in_child();
		setpgid(0, 0);
		/* Out of the foreground group, its summary on the terminal would stop it under
		 * `stty tostop`; an ignored SIGTTOU lets the write through. */
		signal(SIGTTOU, SIG_IGN);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0 && null != STDIN_FILENO) {
			dup2(null, STDIN_FILENO);
			close(null);
		}
		/* This end, and only this, survives exec: the collector keeps no file of the
		 * user's open (a lock, a pipe whose reader waits for its end) past the program.
		 * It may be below 3 (ctp-run started with stdin or stdout closed): stdin, stdout
		 * and stderr stay. */
		fcntl(ready[1], F_SETFD, 0);
		ctp_close_fds_but(3, ready[1]);
		char fd_text[16];
		snprintf(fd_text, sizeof(fd_text), "%d", ready[1]);
		char *args[] = {(char *)collector, "--socket",	   (char *)sock,
				"--output",	   (char *)output, "--ready-fd",
				fd_text,	   "--summary",	   NULL};
		execv(collector, args);
		fprintf(stderr, "ctp-run: %s: %s\n", collector, strerror(errno));
		_exit(CTP_RUN_EXIT_FAILURE);
	}
	close(ready[1]);
	bool ok = wait_ready(ready[0], pid);
	close(ready[0]);
	if (!ok) {
		stop_collector(pid);
		return -1;
	}
	return pid;
}

static bool send_msg(int fd, const void *msg, size_t len, const char *what)
{
	ssize_t n;
	do
		n = send(fd, msg, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return true;
	fprintf(stderr, "ctp-run: cannot send %s to ctp-collector: %s\n", what,
		n < 0 ? strerror(errno) : "short write");
	return false;
}

/* The launcher's control connection: a LAUNCHER hello now, APP_EXIT when the app has ended,
 * and its close tells the collector to finish. */
static int connect_control(const char *sock)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "ctp-run: socket: %s\n", strerror(errno));
		return -1;
	}
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
	int r;
	do
		r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	while (r < 0 && errno == EINTR);
	if (r != 0) {
		fprintf(stderr, "ctp-run: cannot connect to ctp-collector at %s: %s\n", sock,
			strerror(errno));
		close(fd);
		return -1;
	}
	struct ctp_msg_header hello = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_LAUNCHER};
	if (!send_msg(fd, &hello, sizeof(hello), "the launcher hello")) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The tracing environment: the preload in LD_PRELOAD, and the collector's socket. */
static void set_tracing_environment(const char *preload, const char *sock, int stack_depth)
{
	const char *old = getenv("LD_PRELOAD");
	char *ld_preload = NULL;
	if (old != NULL && old[0] != '\0') {
		if (asprintf(&ld_preload, "%s:%s", preload, old) < 0)
			ld_preload = NULL;
	}
	setenv("LD_PRELOAD", ld_preload != NULL ? ld_preload : preload, 1);
	setenv("CTP_SOCKET", sock, 1);
	if (stack_depth >= 0) {
		char depth[16];
		snprintf(depth, sizeof(depth), "%d", stack_depth);
		setenv("CTP_STACK_DEPTH", depth, 1);
	}
}

/* The child's side of starting the app: environment (none of tracing without a `preload`: its
 * loader could not take it), signals, exec. An exec failure goes back to the launcher as an
 * errno through the close-on-exec pipe `err_fd`. */
static void exec_app(char **argv, const char *preload, const char *sock, int stack_depth,
		     int err_fd)
{
	ctp_run_signals_reset_in_child();
	if (preload != NULL)
		set_tracing_environment(preload, sock, stack_depth);
	execvp(argv[0], argv);
	int err = errno;
	ssize_t ignored = write(err_fd, &err, sizeof(err));
	(void)ignored;
	_exit(err == ENOENT ? CTP_RUN_EXIT_NOT_FOUND : CTP_RUN_EXIT_NOT_EXECUTABLE);
}

/* Starts the app in the launcher's process group (it keeps the terminal and job control) and
 * makes it the target of forwarded signals. Returns its pid (also when exec failed: that child
 * exits with 126 or 127 and is waited for like any app), or -1 when it could not fork. */
static pid_t start_app(char **argv, const char *preload, const char *sock, int stack_depth)
{
	int err_pipe[2];
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		fprintf(stderr, "ctp-run: pipe: %s\n", strerror(errno));
		return -1;
	}
	ctp_run_signals_block(true);
	pid_t pid = fork();
	if (pid == 0) {
		close(err_pipe[0]);
		exec_app(argv, preload, sock, stack_depth, err_pipe[1]);
	}
	if (pid > 0)
		ctp_run_signals_target(pid, true);
	ctp_run_signals_block(false);
	close(err_pipe[1]);
	if (pid < 0) {
		fprintf(stderr, "ctp-run: fork: %s\n", strerror(errno));
		close(err_pipe[0]);
		return -1;
	}
	int err = 0;
	ssize_t n;
	do
		n = read(err_pipe[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(err_pipe[0]);
	if (n == (ssize_t)sizeof(err)) {
		if (err == ENOENT)
			fprintf(stderr, "ctp-run: %s: command not found\n", argv[0]);
		else
			fprintf(stderr, "ctp-run: %s: %s\n", argv[0], strerror(err));
	}
	return pid;
}

/* Waits for the app, stopping when it stops (ctp_run_stop_as); notices on the way if the
 * collector ends first. Returns the app's wait status. */
static int wait_app(pid_t app, pid_t collector, bool *collector_gone)
{
	for (;;) {
		int status;
		pid_t p = wait_eintr(-1, &status, WUNTRACED);
		if (p > 0 && WIFSTOPPED(status)) {
			if (p == app)
				ctp_run_stop_as(app, WSTOPSIG(status));
			continue;
		}
		if (p == app)
			return status;
		if (p == collector && !*collector_gone) {
			*collector_gone = true;
			char how[96];
			describe_status(how, sizeof(how), status);
			fprintf(stderr,
				"ctp-run: warning: ctp-collector %s while the app was running; "
				"the trace may be incomplete\n",
				how);
		}
		if (p < 0) { /* cannot happen while the app is our child; do not spin */
			fprintf(stderr, "ctp-run: waitpid: %s\n", strerror(errno));
			return 0;
		}
	}
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return CTP_RUN_EXIT_FAILURE;
}

/* After the app: report its end, close the control connection, let the collector drain. */
static void finish_collector(pid_t collector, int control, pid_t app, int app_status, bool gone,
			     const char *output)
{
	if (gone) { /* already reported while the app ran: one warning is enough */
		close(control);
		return;
	}
	/* A Ctrl-C now is for the collector: the user is waiting on its drain. */
	ctp_run_signals_target(collector, false);
	struct ctp_msg_app_exit msg = {
		.h = {.magic = CTP_WIRE_MAGIC, .type = CTP_MSG_APP_EXIT},
		.pid = (uint32_t)app,
		.wait_status = app_status,
	};
	send_msg(control, &msg, sizeof(msg), "the app's exit");
	close(control);
	int status;
	pid_t r = wait_eintr(collector, &status, 0);
	ctp_run_signals_target(0, false);
	if (r != collector) {
		fprintf(stderr, "ctp-run: waitpid for ctp-collector: %s\n", strerror(errno));
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char how[96];
		describe_status(how, sizeof(how), status);
		fprintf(stderr, "ctp-run: ctp-collector %s; %s may be incomplete\n", how, output);
	}
}

int main(int argc, char **argv)
{
	struct run_options o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char *program_path;
	rc = ctp_run_check_program(o.argv[0], &program_path);
	if (rc != 0)
		return rc;
	bool carries_preload = ctp_run_warn_untraceable(program_path);
	free(program_path);
	char *collector_path, *preload_path;
	if (!ctp_run_find_parts(&collector_path, &preload_path))
		return CTP_RUN_EXIT_FAILURE;
	ctp_run_signals_install();
	char *dir = ctp_run_make_dir();
	if (dir == NULL)
		return CTP_RUN_EXIT_FAILURE;
	char *sock = NULL;
	if (asprintf(&sock, "%s/sock", dir) < 0) {
		ctp_run_remove_dir(dir);
		return CTP_RUN_EXIT_FAILURE;
	}

	rc = CTP_RUN_EXIT_FAILURE;
	int die_of = 0; /* a signal ctp-run ends by: the app's, or one before the app started */
	int control = -1;
	pid_t collector = start_collector(collector_path, sock, o.output);
	if (collector > 0)
		control = connect_control(sock);
	int sig = ctp_run_signals_pending();
	if (sig != 0)
		fprintf(stderr, "ctp-run: %s before the program started\n", strsignal(sig));
	if (collector > 0 && (control < 0 || sig != 0)) {
		if (control >= 0)
			close(control);
		stop_collector(collector);
		collector = -1;
	}
	if (collector > 0) {
		pid_t app = start_app(o.argv, carries_preload ? preload_path : NULL, sock,
				      o.stack_depth);
		if (app > 0) {
			bool gone = false;
			int app_status = wait_app(app, collector, &gone);
			finish_collector(collector, control, app, app_status, gone, o.output);
			rc = exit_code_of(app_status);
			if (WIFSIGNALED(app_status))
				die_of = WTERMSIG(app_status);
		} else {
			close(control);
			stop_collector(collector);
		}
	}
	if (sig != 0)
		die_of = sig;
	ctp_run_remove_dir(dir);
	free(sock);
	free(dir);
	free(collector_path);
	free(preload_path);
	if (die_of != 0) {
		ctp_run_die_of(die_of);
		rc = 128 + die_of;
	}
	return rc;
}

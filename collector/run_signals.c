/* Signals for ctp-run, which stands for its app before the shell or whoever started it: it
 * forwards signals to the app, stops when the app stops, and dies of the signal the app died of.
 *
 * Forwarding. The launcher must stop as its app stops: a SIGTERM from a
 * service manager or a SIGINT from `kill` reaches the launcher, and the app decides what it
 * means. Keyboard signals (Ctrl-C, Ctrl-\, hangup) are sent by the terminal to the whole
 * foreground process group, which the app shares with the launcher: forwarding those too
 * would deliver them twice, and many programs read a second Ctrl-C as "quit now". The kernel
 * marks those with si_code SI_KERNEL. */
#include "collector/run.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

const int ctp_run_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
const size_t ctp_run_forwarded_count = sizeof(ctp_run_forwarded) / sizeof(ctp_run_forwarded[0]);

static volatile sig_atomic_t target_pid;
static volatile sig_atomic_t target_shares_terminal;
static volatile sig_atomic_t pending;
static bool handled[NSIG];
static sigset_t start_mask;	 /* what the launcher was started with, and so the app gets */
static bool child_exits_ignored; /* started with SIGCHLD ignored, and so the app gets it */

/* The stop signals a terminal sends (^Z; a read from the background). Not SIGTTOU: the launcher
 * writes to the terminal itself, and while it caught SIGTTOU such a write from the background
 * under `stty tostop` would be refused again and again, never stopping it. */
static const int job_stops[] = {SIGTSTP, SIGTTIN};

static void forward(int sig, siginfo_t *info, void *ucontext)
{
	(void)ucontext;
	pid_t pid = target_pid;
	if (pid <= 0) {
		if (pending == 0)
			pending = sig;
		return;
	}
	if (target_shares_terminal && info != NULL && info->si_code == SI_KERNEL)
		return;
	kill(pid, sig);
}

/* Takes sig at its default action now: a stop returns once the launcher is continued, with its
 * handler and mask as they were (from a handler of sig too); a deadly one does not return. */
static void take_default(int sig)
{
	struct sigaction dfl, old;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	bool changed = sig != SIGSTOP && sigaction(sig, &dfl, &old) == 0;
	sigset_t set, mask;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, &mask);
	/* Delivered before raise returns. (A stop by a terminal signal is discarded in an orphaned
	 * process group, as the app's own would have been.) */
	raise(sig);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (changed)
		sigaction(sig, &old, NULL);
}

/* A stop signal is the app's to take, as the others are: it may catch or ignore it and go on
 * (a launcher stopped at a ^Z on its own would hand the terminal back to its shell with the app
 * running on in the background). One the terminal sent, the app has itself; one sent to the
 * launcher alone is passed on. The launcher stops when the app stops (ctp_run_stop_as), or, with
 * no app to take the signal (before the app started; while the collector drains after it),
 * stops by itself, so that the shell gets its prompt back. */
static void on_job_stop(int sig, siginfo_t *info, void *ucontext)
{
	(void)ucontext;
	pid_t pid = target_pid;
	if (pid <= 0 || !target_shares_terminal)
		take_default(sig);
	else if (info == NULL || info->si_code != SI_KERNEL)
		kill(pid, sig);
}

/* Catches sig with handler, unless the launcher was started with it ignored: the app is then
 * started with it ignored too, as without the launcher. */
static void catch_signal(int sig, void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) == 0)
		handled[sig] = true;
}

void ctp_run_signals_install(void)
{
	sigprocmask(SIG_SETMASK, NULL, &start_mask);
	/* Started with SIGCHLD ignored (a supervisor's or a script's leftover), the launcher would
	 * have its children reaped by the kernel: its wait for the app would last until every child
	 * ended, the collector too, which waits for the app's end, and neither would. */
	struct sigaction chld;
	if (sigaction(SIGCHLD, NULL, &chld) == 0 && chld.sa_handler == SIG_IGN) {
		child_exits_ignored = true;
		signal(SIGCHLD, SIG_DFL);
	}
	for (size_t i = 0; i < ctp_run_forwarded_count; i++)
		catch_signal(ctp_run_forwarded[i], forward);
	for (size_t i = 0; i < sizeof(job_stops) / sizeof(job_stops[0]); i++)
		catch_signal(job_stops[i], on_job_stop);
}

void ctp_run_signals_block(bool block)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < ctp_run_forwarded_count; i++)
		sigaddset(&set, ctp_run_forwarded[i]);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void ctp_run_signals_reset_in_child(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (handled[sig])
			signal(sig, SIG_DFL);
	if (child_exits_ignored)
		signal(SIGCHLD, SIG_IGN);
	sigprocmask(SIG_SETMASK, &start_mask, NULL);
}

void ctp_run_signals_target(pid_t pid, bool terminal_shared)
{
	target_shares_terminal = terminal_shared;
	target_pid = pid;
	/* One that came after the launcher last looked, before the app existed: the app never
	 * saw it, so it gets it now. Callers have the signals blocked or no pending one. */
	if (pid > 0 && pending != 0) {
		kill(pid, pending);
		pending = 0;
	}
}

int ctp_run_signals_pending(void)
{
	return pending;
}

/* A launcher that exited 128+N where its app died of signal N would change what the shell
 * around it does: a script whose foreground child exits 130 after a Ctrl-C takes it as handled
 * and runs on, where it ends when the child died of SIGINT; a caller that waits reads "exited"
 * rather than "killed" (Python's returncode, make's message). So the launcher dies of the same
 * signal, as timeout(1) does. Its own core would be a core of the wrong program, and with a
 * core_pattern of "core" it would replace the app's in the same directory: a process that is
 * not dumpable dumps none, whatever the pattern (a pipe to a crash handler included), and the
 * soft RLIMIT_CORE of 0 says the same to a crash handler that reads it. */
void ctp_run_die_of(int sig)
{
	struct rlimit core;
	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
	prctl(PR_SET_DUMPABLE, 0);
	fflush(NULL);
	take_default(sig);
}

/* Whether process pid is in a group stop (state T in /proc/PID/stat; a ptrace stop is t). */
static bool in_group_stop(pid_t pid)
{
	char path[32], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1); /* the state follows the name, at most 16 */
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *name_end = strrchr(buf, ')');
	return name_end != NULL && name_end[1] == ' ' && name_end[2] == 'T';
}

/* A program that stops itself (raise(SIGSTOP) to wait for a debugger, a curses program's
 * SIGTSTP after it put the terminal back, kill -STOP from elsewhere) is seen stopped by the shell
 * that started it, which then gives the terminal back; a launcher that went on waiting would
 * leave that shell waiting too, with the program stopped for good. So the launcher stops with
 * the same signal (SIGSTOP for one it cannot take), and once continued it continues the app if
 * that is still stopped: a shell's fg or bg continues the whole process group, both of them, but
 * a SIGCONT to the launcher alone must reach the app too. At a ^Z the app stops first, and the
 * launcher follows it here (on_job_stop takes the ^Z itself); the app may have been continued by
 * the time its stop is reported, and then nothing is done. */
void ctp_run_stop_as(pid_t app, int sig)
{
	if (!in_group_stop(app))
		return;
	take_default(sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU ? sig : SIGSTOP);
	if (in_group_stop(app))
		kill(app, SIGCONT);
}

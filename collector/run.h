/* ctp-run, the launcher: what its files share. run.c is the sequence (collector, control
 * connection, app, exit status), run_locate.c finds things (its own parts, the program, a run
 * directory), run_untraceable.c says when the loader would run the program untraced,
 * run_signals.c forwards signals to whichever child is in charge. */
#ifndef CTP_COLLECTOR_RUN_H
#define CTP_COLLECTOR_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Exit statuses of the launcher itself, as shells use them for a command. Its own failures use
 * 125, as timeout(1), env(1) and nice(1) do: a program's own exit status 2 (or 1) must not read
 * as "the tracer failed". */
#define CTP_RUN_EXIT_FAILURE 125	/* usage, missing parts, collector did not start */
#define CTP_RUN_EXIT_NOT_EXECUTABLE 126 /* found but cannot be executed */
#define CTP_RUN_EXIT_NOT_FOUND 127	/* no such command */

/* Absolute paths of the collector and the preload, found relative to /proc/self/exe. On failure
 * prints which paths were tried and returns false. */
bool ctp_run_find_parts(char **collector, char **preload);

/* Checks that `program` would be found and executed by execvp with the current PATH. Returns 0
 * when it would, with the file it would execute in *found (malloc'd), else the launcher's exit
 * status after printing why. */
int ctp_run_check_program(const char *program, char **found);

/* Warns on stderr when the dynamic loader would run `path` (as found above) without the preload:
 * statically linked, a loader of another kind, or secure execution (run_untraceable.c). Returns
 * whether the program's environment is to carry the preload: not when its loader cannot take
 * it. */
bool ctp_run_warn_untraceable(const char *path);

/* Makes a private directory (mode 0700, `ctp-run.PID.XXXXXX`) under $XDG_RUNTIME_DIR, $TMPDIR
 * or /tmp, short enough to hold a Unix socket path `<dir>/sock`, after sweeping the base of
 * directories killed runs left. NULL after printing why. */
char *ctp_run_make_dir(void);

/* Removes the run directories under base that killed runs left behind, and only those
 * (collector/run_sweep.c says how it knows). */
void ctp_run_sweep_stale_dirs(const char *base);

/* Removes the run directory and the socket in it. */
void ctp_run_remove_dir(const char *dir);

/* Signals the launcher passes on: the ones a user or a service manager sends to stop or poke
 * a program. */
extern const int ctp_run_forwarded[];
extern const size_t ctp_run_forwarded_count;

/* Installs the forwarding handlers (leaving signals that were ignored at start ignored, so the
 * app inherits that as it would without the launcher). */
void ctp_run_signals_install(void);

/* Blocks or unblocks the forwarded signals (around fork, so none is lost between fork and
 * knowing the child's pid). */
void ctp_run_signals_block(bool block);

/* In a child before exec: handlers back to default, the mask and SIGCHLD's disposition the
 * launcher started with. */
void ctp_run_signals_reset_in_child(void);

/* Where forwarded signals go from now on. With `terminal_shared` the target is in the
 * launcher's process group and receives keyboard signals from the terminal itself, so those
 * are not sent a second time. pid 0: nobody (the first signal is remembered, and sent to the
 * next target). */
void ctp_run_signals_target(pid_t pid, bool terminal_shared);

/* The first forwarded signal received while there was no target, or 0. */
int ctp_run_signals_pending(void);

/* The app was reported stopped by signal sig: the launcher stops too, and continues the app
 * when it is continued itself. */
void ctp_run_stop_as(pid_t app, int sig);

/* Ends the launcher killed by signal sig, as the app it ran was (or as the app would have been
 * by a signal that came before it started), without a core of its own; returns only where the
 * signal does not end a process, and the caller then exits 128+sig. */
void ctp_run_die_of(int sig);

#endif

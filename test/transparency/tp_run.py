#!/usr/bin/python3
"""Runs one command for the transparency suite and records exactly how it ended.

tp_run.py --out F --err F --status F [options] -- COMMAND ARGS...

Writes the command's stdout to --out, its stderr to --err, and to --status one line: "exit N",
"signal NAME" or "signal NAME core" (the raw wait status, so "died of SIGINT" and "exit 130"
stay apart), or "timeout" when it had to be killed; then "leftover N", the number of its
descendants still alive TAIL seconds after it ended (they are killed; a traced run must not
leave a stuck collector behind). The runner is a child subreaper, so it waits for every
descendant, also daemonised ones (the plain form's collector): when it returns, their files
are complete, with no polling.

Options:
  --cwd DIR            working directory
  --env K=V            set a variable (repeatable); --unset K removes one (repeatable)
  --timeout S          bound on the command (default 10)
  --pty                the command runs in a new session whose controlling terminal is a new
                       pseudo-terminal (its stdin); it is the terminal's foreground group
  --stdin-pipe         stdin is a pipe from the runner, closed after the ready action
  --stack-kb N         the command starts with a stack limit (RLIMIT_STACK, soft and hard) of
                       N KiB, set in the child before its exec: the runner itself keeps its
                       own (Python needs more than the small limits tested)
  --sigchld-ignored    the command starts with SIGCHLD ignored (set in the child before its
                       exec, which keeps it)
  --job-control FILE   with --pty: the runner is to the command what an interactive shell is
                       to a job. It makes itself the leader of a new session whose controlling
                       terminal is the pseudo-terminal, and runs the command in a process
                       group of its own that is the terminal's foreground group (not orphaned:
                       a stop by SIGTSTP is not discarded). Every time the command stops,
                       "stopped SIG" is appended to FILE and the command alone gets SIGCONT
                       (as from kill -CONT PID); after the action "susp", a stop is answered
                       with SIGCONT to the whole group (as from fg), then SIGTERM to the command
  --after-ready ACT    once the command printed a line "ready" on stdout: "intr" writes ^C to
                       the terminal (needs --pty), "kill:SIG" sends SIG to the command,
                       "susp" writes ^Z to the terminal (needs --job-control),
                       "vm:PROG:FILE" writes "VmSize KB VmRSS KB Threads N" of the descendant
                       running PROG (or the command itself) to FILE, then closes stdin;
                       "trace:FILE:REGEX" waits (within the timeout) until a line of the trace
                       FILE, being written, matches REGEX as ctp-cat prints it, then closes
                       stdin (at once when FILE is empty: an untraced run)
"""
import argparse
import ctypes
import fcntl
import os
import re
import resource
import select
import signal
import subprocess
import sys
import termios
import time

PR_SET_CHILD_SUBREAPER = 36
TAIL = 10.0


def children(pid):
    """Direct children of pid (all its threads')."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def describe(status):
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name[3:]
        return f"signal {name}" + (" core" if os.WCOREDUMP(status) else "")
    return f"exit {os.WEXITSTATUS(status)}"


def vm_of(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.split()[0] if v.split() else ""
    return f"VmSize {fields['VmSize']} VmRSS {fields['VmRSS']} Threads {fields['Threads']}\n"


def find_running(root, prog):
    want = os.path.realpath(prog)
    for pid in [root] + descendants(root):
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == want:
                return pid
        except OSError:
            pass
    return None


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--err", required=True)
    ap.add_argument("--status", required=True)
    ap.add_argument("--cwd")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--unset", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--pty", action="store_true")
    ap.add_argument("--stdin-pipe", action="store_true")
    ap.add_argument("--stack-kb", type=int)
    ap.add_argument("--after-ready")
    ap.add_argument("--job-control")
    ap.add_argument("--sigchld-ignored", action="store_true")
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()

    if a.job_control and os.getpgrp() == os.getpid():
        # A process group leader cannot start a session: the runner goes on in a child.
        child = os.fork()
        if child:
            _, st = os.waitpid(child, 0)
            sys.exit(os.waitstatus_to_exitcode(st))

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("tp_run: prctl(PR_SET_CHILD_SUBREAPER) failed")
    signal.signal(signal.SIGALRM, on_alarm)

    env = dict(os.environ)
    for k in a.unset:
        env.pop(k, None)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v

    master = slave = stdin_w = None
    if a.job_control and not a.pty:
        sys.exit("tp_run: --job-control needs --pty")
    if a.pty:
        if a.job_control:
            os.setsid()
        master, slave = os.openpty()
        if a.job_control:
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        stdin = slave
    elif a.stdin_pipe:
        stdin, stdin_w = os.pipe()
    else:
        stdin = subprocess.DEVNULL

    def child_setup():
        # A job started from a non-interactive shell inherits SIGINT and SIGQUIT ignored;
        # the programs here must see them as a terminal's foreground job does.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)
        if a.sigchld_ignored:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        if a.pty and not a.job_control:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        if a.stack_kb:
            resource.setrlimit(resource.RLIMIT_STACK, (a.stack_kb * 1024, a.stack_kb * 1024))

    # Stops are seen by waitpid(WUNTRACED) when SIGCHLD says so (a pidfd tells only the end).
    chld_r = None
    if a.job_control:
        open(a.job_control, "w").close()
        chld_r, chld_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        os.set_blocking(chld_w, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(chld_w)
    session = {"process_group": 0} if a.job_control else {"start_new_session": True}

    out_r, out_w = os.pipe()
    with open(a.err, "wb") as errf:
        p = subprocess.Popen(a.cmd, stdin=stdin, stdout=out_w, stderr=errf, cwd=a.cwd,
                             env=env, preexec_fn=child_setup, **session)
    os.close(out_w)
    if a.job_control:
        os.tcsetpgrp(slave, p.pid)  # the job is in the foreground, as a shell puts it
    if slave is not None:
        os.close(slave)
    if isinstance(stdin, int) and stdin_w is not None:
        os.close(stdin)
    pidfd = os.pidfd_open(p.pid)

    out = bytearray()
    acted = a.after_ready is None
    deadline = time.monotonic() + a.timeout
    status = None
    out_open = True
    while status is None:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        fds = [pidfd] + ([out_r] if out_open else []) + ([master] if master is not None else [])
        fds += [chld_r] if chld_r is not None else []
        ready, _, _ = select.select(fds, [], [], left)
        if chld_r is not None and chld_r in ready:
            os.read(chld_r, 4096)
            status = wait_command(a, p.pid, block=False)
        if out_r in ready:
            chunk = os.read(out_r, 65536)
            if not chunk:
                out_open = False
            out += chunk
        if master is not None and master in ready:
            try:
                os.read(master, 65536)  # the terminal's echo; not compared
            except OSError:  # EIO: no process holds the terminal any more
                # Closing it would hang up the session, and the runner leads the session with
                # --job-control: it is kept open (unread) until the runner ends.
                if not a.job_control:
                    os.close(master)
                master = None
        if not acted and status is None and (out.startswith(b"ready\n") or b"\nready\n" in out):
            acted = True
            act(a, p.pid, master, deadline)
            if stdin_w is not None:
                os.close(stdin_w)
                stdin_w = None
        if pidfd in ready and status is None:
            status = wait_command(a, p.pid, block=True)
    p.returncode = 0  # reaped above; keeps Popen from waiting again

    if status is None:
        for pid in [p.pid] + descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.waitpid(p.pid, 0)
        what = "timeout"
        if not acted:
            print(f"tp_run: {a.cmd[0]} never printed 'ready'", file=sys.stderr)
    else:
        what = describe(status)
    if stdin_w is not None:
        os.close(stdin_w)

    # Every descendant left (a collector draining, a daemon) gets TAIL seconds to end.
    leftover = 0
    signal.alarm(int(TAIL))
    try:
        while True:
            os.waitpid(-1, 0)
    except ChildProcessError:
        signal.alarm(0)
    except Timeout:
        left = children(os.getpid())
        leftover = len(left)
        for pid in left:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                print(f"tp_run: killing leftover process {pid}: {cmd}", file=sys.stderr)
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass

    # Every writer of stdout is gone now: read it to its end.
    while out_open:
        chunk = os.read(out_r, 65536)
        out += chunk
        out_open = bool(chunk)
    with open(a.out, "wb") as f:
        f.write(out)
    with open(a.status, "w") as f:
        f.write(f"{what}\nleftover {leftover}\n")


def trace_matches(path, regex):
    """Whether a line of the trace at path (complete or still being written) matches regex."""
    ctp_cat = os.path.join(os.environ["CTP_BUILD_DIR"], "cat", "ctp-cat")
    r = subprocess.run([ctp_cat, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return re.search(regex.encode(), r.stdout, re.MULTILINE) is not None


group_stop_sent = False


def note_stop(a, pid, status):
    """Appends a stop of the command to the --job-control file and continues it."""
    global group_stop_sent
    name = signal.Signals(os.WSTOPSIG(status)).name[3:]
    with open(a.job_control, "a") as f:
        f.write(f"stopped {name}\n")
    if group_stop_sent:
        group_stop_sent = False
        os.killpg(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    else:
        os.kill(pid, signal.SIGCONT)


def wait_command(a, pid, block):
    """Notes and answers the command's stops (--job-control) until it ends (its wait status)
    or, unless block, until it has nothing more to report (None)."""
    flags = (os.WUNTRACED if a.job_control else 0) | (0 if block else os.WNOHANG)
    while True:
        got, st = os.waitpid(pid, flags)
        if got != pid:
            return None
        if not os.WIFSTOPPED(st):
            return st
        note_stop(a, pid, st)


def act(a, pid, master, deadline):
    global group_stop_sent
    kind, _, arg = a.after_ready.partition(":")
    if kind == "susp":
        group_stop_sent = True
        os.write(master, b"\x1a")
    elif kind == "intr":
        os.write(master, b"\x03")
    elif kind == "kill":
        os.kill(pid, signal.Signals["SIG" + arg])
    elif kind == "vm":
        prog, _, path = arg.partition(":")
        target = find_running(pid, prog)
        with open(path, "w") as f:
            f.write(vm_of(target) if target else "none\n")
    elif kind == "trace":
        path, _, regex = arg.partition(":")
        while path and not trace_matches(path, regex) and time.monotonic() < deadline:
            time.sleep(0.05)
    else:
        sys.exit(f"tp_run: unknown action {a.after_ready}")


if __name__ == "__main__":
    main()

# Run directories left behind by killed runs (ctp-run and its collector both killed with
# SIGKILL, or the plain form's program and collector) are removed by the next ctp-run that makes
# its own beside them; nothing that may still be in use, or that is not ours, is touched.
source "$(dirname "$0")/lib.sh"

base=$WORK/base
mkdir -m 0755 "$base"
export TMPDIR=$base
unset XDG_RUNTIME_DIR

# run_dir_of PATTERN: the one directory in $base whose name matches PATTERN (empty if none).
run_dir_of() {
	find "$base" -mindepth 1 -maxdepth 1 -name "$1" -printf '%f\n'
}
has_run_dir() { # PATTERN
	[ -n "$(run_dir_of "$1")" ]
}
collector_of() { # SOCKET-DIR: the pid of the collector listening in it
	pgrep -f -- "ctp-collector.*/$1/sock" || true
}
has_collector() { # SOCKET-DIR
	[ -n "$(collector_of "$1")" ]
}
app_of() { # CTP-RUN-PID: its program (sleep)
	pgrep -P "$1" -x sleep || true
}
has_app() { # CTP-RUN-PID
	[ -n "$(app_of "$1")" ]
}
# kill_at_once PID...: SIGKILL all of them as one blow. They are stopped first, because a
# collector that sees its program end between two kill(2)s drains and removes its directory,
# which is not the left-behind run this test makes.
kill_at_once() {
	kill -STOP "$@"
	kill -KILL "$@"
}
one_run() { # NAME: a short traced run that must end as the program does
	local st=0
	"$CTP_RUN" -o "$WORK/$1.jsonl.zst" true >"$WORK/$1.out" 2>"$WORK/$1.err" || st=$?
	expect_eq "($1) the run itself is as always" "0:" "$st:$(grep -v '^ctp: 1 process' "$WORK/$1.err")"
}

# A run killed whole: ctp-run and its collector.
"$CTP_RUN" -o "$WORK/killed.jsonl.zst" sleep 60 >/dev/null 2>&1 &
killed_run=$!
check "(killed) its run directory is made" wait_until 10 has_run_dir "ctp-run.$killed_run.*"
killed_dir=$(run_dir_of "ctp-run.$killed_run.*")
check "(killed) its collector listens" wait_until 10 has_collector "$killed_dir"
check "(killed) its program runs" wait_until 10 has_app $killed_run
killed_app=$(app_of $killed_run)
at_exit kill -KILL "$killed_app"
kill_at_once $killed_run $(collector_of "$killed_dir")
wait $killed_run 2>/dev/null || true
check "(killed) its directory is left behind, socket and all" [ -S "$base/$killed_dir/sock" ]

# The plain form's program and its collector, killed.
LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so sleep 60 >/dev/null 2>&1 &
plain_app=$!
at_exit kill -KILL $plain_app
check "(plain) its run directory is made" wait_until 10 has_run_dir "ctp-$plain_app-*"
plain_dir=$(run_dir_of "ctp-$plain_app-*")
check "(plain) its collector listens" wait_until 10 has_collector "$plain_dir"
kill_at_once $plain_app $(collector_of "$plain_dir")
wait $plain_app 2>/dev/null || true
check "(plain) its directory is left behind" [ -S "$base/$plain_dir/sock" ]

# A directory whose maker is gone while a process still listens on its socket, as a collector
# that drains a killed run does: kept. (A real collector cannot be held there: stopped, it dies of the
# SIGHUP its orphaned process group gets once ctp-run is killed.)
bound_dir=ctp-run.999999999.bound0
mkdir -m 0700 "$base/$bound_dir"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen()
print("bound", flush=True)
time.sleep(60)' "$base/$bound_dir/sock" >"$WORK/listener.out" &
listener=$!
at_exit kill -KILL $listener
check "(bound) a process listens on its socket" wait_until 10 grep -qx bound "$WORK/listener.out"

# A run that is going on, made by hand look-alikes that are not ours to remove, and one whose
# maker (this shell) lives.
"$CTP_RUN" -o "$WORK/live.jsonl.zst" sleep 60 >/dev/null 2>&1 &
live_run=$!
at_exit kill -TERM $live_run
check "(live) its run directory is made" wait_until 10 has_run_dir "ctp-run.$live_run.*"
live_dir=$(run_dir_of "ctp-run.$live_run.*")
check "(live) its collector listens" wait_until 10 has_collector "$live_dir"
mkdir -m 0700 "$base/ctp-run.999999999.other1" "$base/ctp-run.999999999.nobody" \
	"$base/ctp-run.999999999.groupw" "$base/ctp-run.$$.mine00" "$base/ctp-run.999999999.notdir"
rmdir "$base/ctp-run.999999999.notdir"
: >"$base/ctp-run.999999999.notdir"
: >"$base/ctp-run.999999999.other1/notes"
chown nobody "$base/ctp-run.999999999.nobody"
chmod 0770 "$base/ctp-run.999999999.groupw"

one_run first
check "(killed) the next run removed its directory" [ ! -e "$base/$killed_dir" ]
check "(plain) the next run removed its directory" [ ! -e "$base/$plain_dir" ]
check "(bound) kept while a process listens on its socket" [ -S "$base/$bound_dir/sock" ]
check "(live) a run going on keeps its directory" [ -S "$base/$live_dir/sock" ]
for kept in other1 nobody groupw notdir; do
	check "(kept) ctp-run.999999999.$kept" [ -e "$base/ctp-run.999999999.$kept" ]
done
check "(kept) a directory named by a live process" [ -d "$base/ctp-run.$$.mine00" ]
expect_eq "(first) what is left: the runs that may be in use, the look-alikes, no directory of its own" \
	"$(printf '%s\n' "$live_dir" "ctp-run.$$.mine00" \
		ctp-run.999999999.{bound0,groupw,nobody,notdir,other1} | sort | tr '\n' ' ')" \
	"$(run_dir_of '*' | sort | tr '\n' ' ')"

# Once the process that has it bound is gone, it goes with the next run.
kill -KILL $listener
wait $listener 2>/dev/null || true
one_run second
check "(bound) the next run removed its directory" [ ! -e "$base/$bound_dir" ]
check "(live) still kept" [ -S "$base/$live_dir/sock" ]
kill -TERM $live_run
st=0
wait $live_run || st=$?
expect_eq "(live) it ends as its program does (143: SIGTERM passed on)" 143 "$st"
check "(live) its own directory is gone with it" [ ! -e "$base/$live_dir" ]

finish

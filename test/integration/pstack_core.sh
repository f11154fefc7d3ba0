# ctp-pstack --core: the same view as ctp-pstack PID, from a core file. (a) The lost-wakeup server
# left hanging, dumped with gcore while it runs: the 47 stuck coroutines with fd, op and stack,
# --report's lost wakeups certain, --trace readable, and the server runs on and ends as it would.
# (b) A real crash's core (the kernel's, ulimit -c): the suspended coroutines and their stacks,
# the crashing one's stack from its thread's registers, and times placed by the core's file
# time. (c) A Boost.Fiber program's core: C++ names shortened in the text view, kept with
# --full-names and in the JSON. Then the errors: not a core, a core of an untraced process, a
# core without the segment (coredump_filter), a truncated core.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

PSTACK=$CTP_BUILD_DIR/pstack/ctp-pstack
check "gcore is installed (gdb, scripts/deps)" command -v gcore
# The kernel writes a crash's core as core_pattern says: "core" (or core.PID) in the working
# directory is what this test can find; a pipe to a crash handler (systemd-coredump, apport)
# takes it away from us.
pattern=$(cat /proc/sys/kernel/core_pattern)
if [ "${pattern:0:1}" = "|" ]; then
	echo "FAIL: kernel.core_pattern pipes cores to '$pattern': no core file can be had here;" \
		"set it to 'core' (sysctl kernel.core_pattern=core) to run this test" >&2
	exit 1
fi

# --- (a) gcore of the hanging lost-wakeup server -----------------------------------------------
K=47
hang_example
server=$(pgrep -P $run_pid -x server)
gcore_status=0
gcore -o "$WORK/lw.core" "$server" >"$WORK/gcore.out" 2>&1 || gcore_status=$?
expect_eq "gcore dumps the hanging server" 0 "$gcore_status"
CORE=$WORK/lw.core.$server
check "the server runs on after gcore" kill -0 "$server"

pstack_status=0
"$PSTACK" --core "$CORE" >"$WORK/lw.txt" 2>"$WORK/lw.err" || pstack_status=$?
expect_eq "ctp-pstack --core exits 0" 0 "$pstack_status"
check "no complaint on stderr" test ! -s "$WORK/lw.err"
json_status=0
"$PSTACK" --json --core "$CORE" >"$WORK/lw.json" || json_status=$?
expect_eq "ctp-pstack --json --core exits 0" 0 "$json_status"
j() { jq -r "$1" "$WORK/lw.json"; }
expect_eq "the snapshot is of the server's pid, from the core" "$server:$CORE:null" \
	"$(j '"\(.pid):\(.core.path):\(.core.signal)"')"
expect_eq "the core names the server's executable" "$EXAMPLE/server" "$(j .core.executable)"
expect_eq "times count back from when the core was written (this boot's)" "false:0" \
	"$(j '"\(.core.taken_at_latest_switch):\([.coroutines[] | select(.ago_ns == null)] | length)"')"
expect_eq "48 coroutines, 4 threads, all suspended, none torn" "48:4:48:0" \
	"$(j '.summary | "\(.coroutines):\(.threads):\(.suspended):\(.torn)"')"
expect_eq "the largest group: $K waiting to read fds closed under them" "$K:suspended:read:true" \
	"$(j '.groups[0] | "\(.count):\(.state):\(.wait.op):\(.wait.closed)"')"
expect_eq "their stack, unwound from the saved contexts in the core" \
	"sched_wait_readable conn_read_line conn_main" "$(j '.groups[0].names[0:3] | join(" ")')"
stack=$(j .groups[0].stack)
expect_eq "the innermost frame has sched.c and a line" "sched.c:true" \
	"$(j ".stacks[] | select(.id == $stack) | .frames[0] | \"\(.file | split(\"/\") | last):\(.line > 0)\"")"
expect_eq "each stranded coroutine names its fd" $K \
	"$(j '[.coroutines[] | select(.wait.closed == true and .wait.fd >= 0)] | length')"
closed_fds=$(j '[.coroutines[] | select(.wait.closed) | .wait.fd] | sort | map(tostring) | join(" ")')
# The threads run in the core: their stacks come from the core's registers of each thread.
expect_eq "the three workers' stacks, from their threads' registers, name worker_main" 3 \
	"$(j '[.groups[] | select(.state == "running") | select(.names | index("worker_main"))
		| .count] | add')"
expect_eq "the main thread's stack names main" 1 \
	"$(j '[.groups[] | select(.state == "running") | select(.names | index("main")) | .count]
		| add')"

check "the text view says it is a core, made without a signal" \
	grep -q "^core $CORE: no signal" "$WORK/lw.txt"
check "the text view's header names the pid" grep -q "^pid $server (" "$WORK/lw.txt"
check "the text view counts the group with its stack" \
	grep -q "^$K x suspended in sched_wait_readable <- conn_read_line <- conn_main" "$WORK/lw.txt"
expect_eq "the text view lists each stranded coroutine with its fd" $K \
	"$(grep -Ec '^    #[0-9]+ ucontext coro_entry, suspended .* ago on thread [0-9]+, waits to read fd [0-9]+ \(closed since\)$' "$WORK/lw.txt")"

# The same snapshot as the live one: a live look right after agrees on the stuck coroutines.
"$PSTACK" --json "$server" >"$WORK/live.json"
expect_eq "the core's stranded fds are those a live look shows" \
	"$(jq -r '[.coroutines[] | select(.wait.closed) | .wait.fd] | sort | map(tostring) | join(" ")' "$WORK/live.json")" \
	"$closed_fds"

report_status=0
"$PSTACK" --report --json --core "$CORE" >"$WORK/lw.report.json" 2>"$WORK/lw.report.err" ||
	report_status=$?
r() { jq -r "$1" "$WORK/lw.report.json"; }
expect_eq "--report --core exits 3 on lost wakeups" 3 "$report_status"
expect_eq "exactly $K lost wakeups" $K "$(r '[.findings[] | select(.kind == "lost_wakeup")] | length')"
expect_eq "their fds are those ctp-pstack shows closed" "$closed_fds" \
	"$(r '[.findings[] | select(.kind == "lost_wakeup") | .fd] | sort | map(tostring) | join(" ")')"
expect_eq "every finding is certain: the core's states are exact" "false:0" \
	"$(r '"\(.summary.uncertain):\([.findings[] | select(.uncertain)] | length)"')"

trace_status=0
"$PSTACK" --trace "$WORK/core.jsonl.zst" --core "$CORE" || trace_status=$?
expect_eq "--trace --core exits 0" 0 "$trace_status"
cat_status=0
"$CTP_CAT" "$WORK/core.jsonl.zst" >"$WORK/core.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the core's trace whole" 0 "$cat_status"
expect_eq "one snapshot line, one state line per coroutine and thread" "1:52" \
	"$(jq -r -s '"\([.[] | select(.type == "snapshot")] | length):\([.[] | select(.type == "state")] | length)"' "$WORK/core.jsonl")"

# Symbols only from the core's own view of things: without symbols, addresses.
nosym_status=0
"$PSTACK" --json --no-symbols --core "$CORE" >"$WORK/nosym.json" || nosym_status=$?
expect_eq "--no-symbols --core: addresses only" "0:true" \
	"$nosym_status:$(jq -r '[.stacks[].names[] | startswith("0x")] | all' "$WORK/nosym.json")"

# EXE given: the same program, named on the command line.
exe_status=0
"$PSTACK" --json --core "$CORE" "$EXAMPLE/server" >"$WORK/exe.json" || exe_status=$?
expect_eq "--core CORE EXE: the same groups" "0:$(j '.groups[0].names[0:3] | join(" ")')" \
	"$exe_status:$(jq -r '.groups[0].names[0:3] | join(" ")' "$WORK/exe.json")"

end_hung_example
expect_eq "ctp-pstack --core named exactly the fds the server stranded" "$stranded" "$closed_fds "
check "the server's last line is unchanged" grep -q "^server: stopped; $K coroutines stranded$" \
	"$WORK/lw.out"

# --- (b) a real crash's core ---------------------------------------------------------------------
mkdir "$WORK/crash"
crash_status=0
(cd "$WORK/crash" && ulimit -c unlimited &&
	exec "$CTP_RUN" -o "$WORK/cr.jsonl.zst" "$PROGRAMS/ucontext_crash" 5 \
		>"$WORK/cr.out" 2>"$WORK/cr.err") || crash_status=$?
expect_eq "the traced program died of SIGSEGV" 139 "$crash_status"
CRASH_CORE=$(ls "$WORK"/crash/core* 2>/dev/null | head -1)
check "the kernel wrote a core into the working directory (core_pattern '$pattern')" \
	test -n "$CRASH_CORE"
crash_pstack=0
"$PSTACK" --json --core "$CRASH_CORE" >"$WORK/cr.json" || crash_pstack=$?
expect_eq "ctp-pstack --core on the crash's core exits 0" 0 "$crash_pstack"
c() { jq -r "$1" "$WORK/cr.json"; }
pid=$("$CTP_CAT" "$WORK/cr.jsonl.zst" | jq -r 'select(.type == "process") | .pid')
expect_eq "the core says signal 11, taken by the program's thread" "$pid:11:$pid:false" \
	"$(c '"\(.pid):\(.core.signal):\(.core.signal_tid):\(.core.taken_at_latest_switch)"')"
expect_eq "the bystander is suspended in bystander, called from __start_context, as untraced" \
	"suspended:bystander __start_context" \
	"$(c '. as $r | $r.coroutines[] | select(.entry == "bystander") as $c
		| $r.stacks[] | select(.id == $c.stack) | "\($c.state):\(.names | join(" "))"')"
expect_eq "main's own stack is suspended in main" "suspended:main" \
	"$(c '. as $r | $r.coroutines[] | select(.kind == "thread") as $c
		| $r.stacks[] | select(.id == $c.stack) | "\($c.state):\(.names[0])"')"
expect_eq "the crasher ran, and its stack from the thread's registers is in crasher" \
	"running:crasher" \
	"$(c '. as $r | $r.coroutines[] | select(.entry == "crasher") as $c
		| $r.stacks[] | select(.id == $c.stack) | "\($c.state):\(.names[0])"')"
"$PSTACK" --core "$CRASH_CORE" "$PROGRAMS/ucontext_crash" >"$WORK/cr.txt"
check "the text view says what killed it" \
	grep -q "^core $CRASH_CORE: killed by SIGSEGV (signal 11) on thread $pid$" "$WORK/cr.txt"
check "the text view shows the crash's line" \
	grep -Eq "^      crasher\+0x[0-9a-f]+ \(ucontext_crash.c:[0-9]+\)" "$WORK/cr.txt"
# The crash as --report and --trace tell it: the process died of the core's signal in the
# coroutine its thread ran, not "was running" as a live snapshot's process.
crash_report=0
"$PSTACK" --report --json --core "$CRASH_CORE" >"$WORK/cr.report.json" || crash_report=$?
expect_eq "--report --core on a crash's core exits 3 (a crash)" 3 "$crash_report"
expect_eq "one crash: the crasher, SIGSEGV on the program's thread, where it died" \
	"1:crasher:11:$pid:crasher" \
	"$(jq -r '[.findings[] | select(.kind == "crash")] | "\(length):\(.[0].entry):\(.[0].signal):\(.[0].tid):\(.[0].stack[0])"' "$WORK/cr.report.json")"
expect_eq "the process counts as ended by a signal" "1:1" \
	"$(jq -r '"\(.summary.processes_ended):\(.summary.crashed)"' "$WORK/cr.report.json")"
"$PSTACK" --report --core "$CRASH_CORE" >"$WORK/cr.report.txt" || true
check "the text report does not call the crashed process running" \
	test "$(grep -c "was running" "$WORK/cr.report.txt")" = 0
check "the text report names the crash" grep -q "^CRASH: pid $pid (ucontext_crash) died of signal 11" \
	"$WORK/cr.report.txt"
"$PSTACK" --trace "$WORK/cr.core.jsonl.zst" --core "$CRASH_CORE"
expect_eq "--trace --core ends the process with the signal, the crasher and its stack" \
	"11:$pid:crasher:crasher" \
	"$("$CTP_CAT" "$WORK/cr.core.jsonl.zst" | jq -r -s '(.[] | select(.type == "exit")) as $x
		| (.[] | select(.type == "coro" and .coro == $x.coro) | .entry) as $e
		| (.[] | select(.type == "stack" and .id == $x.stack) | .frames[0].sym) as $f
		| "\($x.signal):\($x.tid):\($e):\($f)"')"

# The core's file time is a coarse clock's (a tick of a few ms, later on a loaded machine): a
# program that crashes within that tick of its start writes a core whose time precedes its own
# segment. Such a core is still this boot's, written after every switch it holds. A copy of the
# crash's core, its time set to 10 ms before the program's thread first ran (the segment is made
# just before), must be placed by its file time; one older than the whole program (5 s), or
# written in the future, cannot be, and says so.
first_run=$("$CTP_CAT" "$WORK/cr.jsonl.zst" | jq -r 'select(.type == "coro" and .kind == "thread") | .ts')
mono_to_real=$(python3 -c 'import time; print(time.time_ns() - time.monotonic_ns())')
at_real() { # a core copy whose file time is the monotonic time $2 ns, in realtime
	cp "$CRASH_CORE" "$1"
	local real=$((first_run + mono_to_real + $2))
	touch -d "@$((real / 1000000000)).$(printf %09d $((real % 1000000000)))" "$1"
}
taken_how() {
	"$PSTACK" --json --core "$1" | jq -r '"\(.core.taken_at_latest_switch):\(.taken >= '"$first_run"' - 10000000)"'
}
at_real "$WORK/crash/tick.core" -10000000
expect_eq "a core timed a tick before the program's start counts from its file time" "false:true" \
	"$(taken_how "$WORK/crash/tick.core")"
at_real "$WORK/crash/old.core" -5000000000
expect_eq "a core timed before the program began counts from the latest switch" "true:true" \
	"$(taken_how "$WORK/crash/old.core")"
check "and its text view says so" grep -q "^note: when the core was written is unknown here" \
	<("$PSTACK" --core "$WORK/crash/old.core")
at_real "$WORK/crash/future.core" 3600000000000
expect_eq "a core timed an hour ahead counts from the latest switch" "true:true" \
	"$(taken_how "$WORK/crash/future.core")"

# --- (c) C++ names: Boost.Fiber ---------------------------------------------------------------
# boost_fiber_channels under the plain LD_PRELOAD, stopped by gdb where it leaves (_Exit), its
# waiter fiber suspended in condition_variable::wait, and dumped. A Boost frame is mostly
# template arguments: the text view writes each outermost list as <...>, --full-names and the
# JSON keep them.
gdb_status=0
CTP_OUTPUT=$WORK/fib.zst timeout 120 gdb -batch -nx -iex "set auto-load off" \
	-ex "set breakpoint pending on" \
	-ex "set environment LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so" \
	-ex "break _Exit" -ex run -ex "generate-core-file $WORK/fib.core" -ex kill \
	"$PROGRAMS/boost_fiber_channels" >"$WORK/fib-gdb.out" 2>&1 || gdb_status=$?
expect_eq "gdb dumps boost_fiber_channels at its _Exit" 0 "$gdb_status"
check "the core is written" test -s "$WORK/fib.core"
fib_status=0
"$PSTACK" --core "$WORK/fib.core" >"$WORK/fib.txt" 2>"$WORK/fib.err" || fib_status=$?
expect_eq "ctp-pstack --core on the Boost.Fiber core exits 0" 0 "$fib_status"
expect_eq "the waiter's group, its names shortened" 1 \
	"$(grep -cE '^1 x suspended in boost::fibers::context::resume\(std::unique_lock<\.\.\.>&\) <- ' \
		"$WORK/fib.txt")"
expect_eq "its frames name wait_forever" 1 "$(grep -cE '^ +wait_forever\(\)\+0x' "$WORK/fib.txt")"
expect_eq "no template argument is left in the text view" 0 \
	"$(grep -cE '<[A-Za-z_:]' "$WORK/fib.txt")"
full_status=0
"$PSTACK" --full-names --core "$WORK/fib.core" >"$WORK/fib-full.txt" || full_status=$?
expect_eq "--full-names keeps them (the waiter's entry function)" "0:1" \
	"$full_status:$(grep -cE '^ +#[0-9]+ fcontext void boost::context::detail::fiber_entry<boost::context::detail::fiber_record<' \
		"$WORK/fib-full.txt")"
rep_status=0
"$PSTACK" --report --core "$WORK/fib.core" >"$WORK/fib-report.txt" || rep_status=$?
frep_status=0
"$PSTACK" --report --full-names --core "$WORK/fib.core" >"$WORK/fib-report-full.txt" ||
	frep_status=$?
expect_eq "--report shortens them as ctp-cat's report does, --full-names passed on" \
	"3:0:3:true" "$rep_status:$(grep -c 'unique_lock<boost' "$WORK/fib-report.txt"):$frep_status:$(
		grep -q 'unique_lock<boost::fibers::detail::spinlock_ttas>' "$WORK/fib-report-full.txt" &&
			echo true)"
usage_status=0
"$PSTACK" --json --full-names --core "$WORK/fib.core" >/dev/null 2>"$WORK/fib-usage.err" ||
	usage_status=$?
expect_eq "--full-names with --json: a usage error (2), said" "2:true" \
	"$usage_status:$(grep -q -- '--full-names is for the text views' "$WORK/fib-usage.err" &&
		echo true)"
fjson_status=0
"$PSTACK" --json --core "$WORK/fib.core" >"$WORK/fib.json" || fjson_status=$?
expect_eq "the JSON keeps them" "0:true" "$fjson_status:$(jq -r \
	'[.. | .sym? // empty | select(test("unique_lock<boost::fibers::detail::spinlock_ttas>"))]
	| length > 0' "$WORK/fib.json")"

# --- Errors --------------------------------------------------------------------------------------
# err NAME EXPECTED-STATUS PATTERN ARGS...: ctp-pstack ARGS exits EXPECTED-STATUS and says PATTERN.
err() {
	local name=$1 want=$2 pattern=$3
	shift 3
	local st=0
	"$PSTACK" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || st=$?
	expect_eq "($name) exit status" "$want" "$st"
	check "($name) says: $pattern" grep -q "$pattern" "$WORK/$name.err"
	check "($name) writes nothing on stdout" test ! -s "$WORK/$name.out"
}
err no_core 1 "cannot open $WORK/none: No such file" --core "$WORK/none"
err text_file 8 "is not a core file: not ELF" --core "$WORK/lw.out"
err program 8 "is not a core file: an ELF file, but not a core" --core "$PROGRAMS/ucontext_crash"
err two_programs 2 "one core file and at most one program" --core "$CORE" a b
# A core of a process ctp did not trace.
sleep 60 &
untraced=$!
at_exit kill $untraced
# Until it has exec'd sleep, the pid is a copy of this shell.
is_sleep() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]; }
check "the untraced process runs sleep" wait_until 10 is_sleep $untraced
gcore -o "$WORK/sleep.core" $untraced >/dev/null 2>&1
err untraced 4 "pid $untraced (sleep) was not traced by ctp" --core "$WORK/sleep.core.$untraced"
# A crash whose coredump_filter leaves shared memory out: the segment is not in the core.
mkdir "$WORK/nodump"
(cd "$WORK/nodump" && ulimit -c unlimited && echo 0x31 >/proc/self/coredump_filter &&
	exec "$CTP_RUN" -o "$WORK/nd.jsonl.zst" "$PROGRAMS/ucontext_crash" 5 \
		>/dev/null 2>&1) || true
NODUMP=$(ls "$WORK"/nodump/core* 2>/dev/null | head -1)
check "a core without shared memory was written" test -n "$NODUMP"
err not_dumped 9 "mapped but not dumped.*coredump_filter.*bit 1" --core "$NODUMP"
# A core cut short: in its program headers, and before the segment (the notes kept).
head -c 100 "$CRASH_CORE" >"$WORK/cut_headers"
err cut_headers 10 "is truncated: it ends within its program headers" --core "$WORK/cut_headers"
read -r _ note_off _ _ note_size _ < <(readelf -lW "$CRASH_CORE" | grep -m1 '^ *NOTE ')
notes_end=$((note_off + note_size))
head -c $(((notes_end + 4095) / 4096 * 4096)) "$CRASH_CORE" >"$WORK/cut_segment"
err cut_segment 10 "is truncated: it ends before the ctp segment of pid $pid" \
	--core "$WORK/cut_segment"
# Cut only after the segment (the last page: the vsyscall page's copy): shown, with a warning.
size=$(stat -c %s "$CRASH_CORE")
head -c $((size - 4096)) "$CRASH_CORE" >"$WORK/cut_tail"
tail_status=0
"$PSTACK" --json --core "$WORK/cut_tail" >"$WORK/cut_tail.json" 2>"$WORK/cut_tail.err" ||
	tail_status=$?
expect_eq "a core cut after its segment is shown, its coroutines all there" "0:2" \
	"$tail_status:$(jq -r .summary.coroutines "$WORK/cut_tail.json")"
check "with a warning that it is truncated" grep -q "warning: .*cut_tail is truncated" \
	"$WORK/cut_tail.err"
finish

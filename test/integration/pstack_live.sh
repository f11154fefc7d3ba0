# ctp-pstack on running programs: the lost-wakeup server left hanging by its client (--hold),
# under ctp-run, and a program with 10,000 parked coroutines under a plain LD_PRELOAD. While
# each runs, ctp-pstack must name its coroutines, their states, the fd and operation each waits
# on and the functions of their stacks; the programs must behave as if it had never looked (same
# output, same exit). Then the error cases. (Its time is measured by scripts/bench.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

PSTACK=$CTP_BUILD_DIR/pstack/ctp-pstack
PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so

# --- The lost-wakeup server, hanging -----------------------------------------------------------
K=47
hang_example
server=$(pgrep -P $run_pid -x server)

blocks_before=$(segment_blocks "$server")
pstack_status=0
"$PSTACK" "$server" >"$WORK/lw.txt" 2>"$WORK/lw.pstack.err" || pstack_status=$?
expect_eq "ctp-pstack PID exits 0" 0 "$pstack_status"
expect_eq "ctp-pstack added no memory to the program's segment (blocks)" "$blocks_before" \
	"$(segment_blocks "$server")"
json_status=0
"$PSTACK" --json "$server" >"$WORK/lw.json" || json_status=$?
expect_eq "ctp-pstack --json PID exits 0" 0 "$json_status"
j() { jq -r "$1" "$WORK/lw.json"; }

expect_eq "the snapshot is of the server" "$server" "$(j .pid)"
expect_eq "60 connections were made, 12 ended; the control connection's and 47 stranded remain" \
	48 "$(j .summary.coroutines)"
expect_eq "the main thread and three workers" 4 "$(j .summary.threads)"
expect_eq "every coroutine is suspended, every station read consistently" "48:0:0" \
	"$(j '"\(.summary.suspended):\(.summary.running):\(.summary.torn)"')"
expect_eq "the largest group: $K waiting to read fds closed under them" "$K:suspended:read:true" \
	"$(j '.groups[0] | "\(.count):\(.state):\(.wait.op):\(.wait.closed)"')"
expect_eq "their stack names the server's read wait, called from its line reader" \
	"sched_wait_readable conn_read_line conn_main" "$(j '.groups[0].names[0:3] | join(" ")')"
expect_eq "no stack has a frame in the tracer; the group's ends in __start_context, as untraced" \
	"0:__start_context" \
	"$(j '"\([.stacks[].frames[] | select(.module // "" | test("libctp"))] | length):\(.groups[0].names[-1])"')"
stack=$(j .groups[0].stack)
expect_eq "the stack's innermost frame has sched.c and a line" "sched.c:true" \
	"$(j ".stacks[] | select(.id == $stack) | .frames[0] | \"\(.file | split(\"/\") | last):\(.line > 0)\"")"
expect_eq "the control connection's coroutine waits on a live fd at the same place" \
	"1:read:false:sched_wait_readable" \
	"$(j '[.groups[] | select(.wait.closed == false)][0] | "\(.count):\(.wait.op):\(.wait.closed):\(.names[0])"')"
expect_eq "each coroutine has its kind, entry, thread and a time since it suspended" 0 \
	"$(j '[.coroutines[] | select(.kind == "ucontext") | select(.entry != "coro_entry" or .tid <= 0
		or .ago_ns == null or .since == null)] | length')"
expect_eq "the threads run (no stack to show)" "4:running" \
	"$(j '[.coroutines[] | select(.kind == "thread") | .state] | "\(length):\(unique | join(","))"')"
closed_fds=$(j '[.coroutines[] | select(.wait.closed) | .wait.fd] | sort | map(tostring) | join(" ")')

# A thread's id stands for its process.
worker_tid=$(ls /proc/$server/task | grep -vx "$server" | head -1)
tid_status=0
"$PSTACK" --json "$worker_tid" >"$WORK/tid.json" || tid_status=$?
expect_eq "ctp-pstack TID shows the thread's process" "0:$server:48" \
	"$tid_status:$(jq -r '"\(.pid):\(.summary.coroutines)"' "$WORK/tid.json")"

check "the text view counts the group with its stack" \
	grep -q "^$K x suspended in sched_wait_readable <- conn_read_line <- conn_main" "$WORK/lw.txt"
check "the text view says the fds were closed" grep -q "waiting to read on fds closed since$" \
	"$WORK/lw.txt"
check "the text view shows the frame with file:line" \
	grep -Eq "^      sched_wait_readable\+0x[0-9a-f]+ \(sched.c:[0-9]+\)" "$WORK/lw.txt"
expect_eq "the text view lists each stranded coroutine with its fd" $K \
	"$(grep -Ec '^    #[0-9]+ ucontext coro_entry, suspended .* ago on thread [0-9]+, waits to read fd [0-9]+ \(closed since\)$' "$WORK/lw.txt")"
# --no-symbols: each frame as its place in its file, which addr2line names from the binary.
"$PSTACK" --no-symbols "$server" >"$WORK/lw.nosym.txt"
place=$(grep -m1 -Eo "^$K x suspended in server\+0x[0-9a-f]+" "$WORK/lw.nosym.txt" | sed 's/.* in //' || true)
check "--no-symbols shows the group's innermost frame as server+0xOFF ($place)" [ -n "$place" ]
expect_eq "which addr2line names from the binary: the same function as with symbols" \
	sched_wait_readable \
	"$(addr2line -f -e "$EXAMPLE/server" "${place#server+}" | head -1)"

# --report: ctp-cat's analysis on the snapshot, where the states are exact, so certain.
report_status=0
"$PSTACK" --report --json "$server" >"$WORK/lw.report.json" 2>"$WORK/lw.report.err" ||
	report_status=$?
r() { jq -r "$1" "$WORK/lw.report.json"; }
expect_eq "--report exits 3 on lost wakeups, as ctp-cat --report does" 3 "$report_status"
expect_eq "exactly $K lost wakeups" $K "$(r '[.findings[] | select(.kind == "lost_wakeup")] | length')"
expect_eq "their fds are those ctp-pstack shows closed" "$closed_fds" \
	"$(r '[.findings[] | select(.kind == "lost_wakeup") | .fd] | sort | map(tostring) | join(" ")')"
expect_eq "every finding is certain: the snapshot's states are exact" "false:0" \
	"$(r '"\(.summary.uncertain):\([.findings[] | select(.uncertain)] | length)"')"
expect_eq "no leak: the live process's coroutines have not outlived it" 0 \
	"$(r '[.findings[] | select(.kind == "leak")] | length')"
expect_eq "the process is a running one, seen at the snapshot" true \
	"$(r '.summary.process_list[0].exit.snapshot > 0')"
text_status=0
"$PSTACK" --report "$server" >"$WORK/lw.report.txt" || text_status=$?
expect_eq "the text report exits 3 too" 3 "$text_status"
check "the text report counts the lost wakeups" grep -q "^LOST WAKEUP: $K coroutines" \
	"$WORK/lw.report.txt"
check "the text report says it is a live snapshot" grep -q "was running: a live snapshot" \
	"$WORK/lw.report.txt"

# --trace: the snapshot as a whole trace that ctp-cat reads like any other.
trace_status=0
"$PSTACK" --trace "$WORK/snap.jsonl.zst" "$server" || trace_status=$?
expect_eq "--trace exits 0" 0 "$trace_status"
cat_status=0
"$CTP_CAT" "$WORK/snap.jsonl.zst" >"$WORK/snap.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the snapshot trace whole" 0 "$cat_status"
expect_eq "one state line per coroutine and thread after one snapshot line" "1:52" \
	"$(jq -r -s '"\([.[] | select(.type == "snapshot")] | length):\([.[] | select(.type == "state")] | length)"' "$WORK/snap.jsonl")"

end_hung_example
expect_eq "the server stranded the $K coroutines it strands without ctp-pstack" $K \
	"$(wc -w <<<"$stranded")"
expect_eq "ctp-pstack named exactly the fds the server stranded" "$stranded" "$closed_fds "
check "the server's last line is unchanged" grep -q "^server: stopped; $K coroutines stranded$" \
	"$WORK/lw.out"
report_status=0
"$CTP_CAT" --report --json "$WORK/lw.jsonl.zst" >"$WORK/lw.report.json" || report_status=$?
expect_eq "the trace still reports the $K lost wakeups" "3:$K" \
	"$report_status:$(jq '[.findings[] | select(.kind == "lost_wakeup")] | length' "$WORK/lw.report.json")"

# --- 10,000 parked coroutines under a plain LD_PRELOAD ------------------------------------------
N=10000
mkdir "$WORK/plain"
mkfifo "$WORK/hold2"
(cd "$WORK/plain" && exec env LD_PRELOAD="$PRELOAD" "$PROGRAMS/pstack_parked" $N \
	<"$WORK/hold2" >"$WORK/parked.out" 2>"$WORK/parked.err") &
parked=$!
at_exit kill $parked
exec 4>"$WORK/hold2"
wait_line "$WORK/parked.out" "^parked $N fd "
pipe_fd=$(sed -n 's/^parked [0-9]* fd //p' "$WORK/parked.out")

text_status=0
"$PSTACK" $parked >"$WORK/parked.txt" || text_status=$?
expect_eq "ctp-pstack PID, $N coroutines: exits 0" 0 "$text_status"
json_status=0
"$PSTACK" --json $parked >"$WORK/parked.json" || json_status=$?
expect_eq "ctp-pstack --json PID, $N coroutines: exits 0" 0 "$json_status"
expect_eq "all $N coroutines, suspended, none torn" "$N:$N:0" \
	"$(jq -r '.summary | "\(.coroutines):\(.suspended):\(.torn)"' "$WORK/parked.json")"
expect_eq "one group: parked in park_on_pipe, called from coro_body, reading the pipe" \
	"$N:park_on_pipe coro_body:read" \
	"$(jq -r '.groups[0] | "\(.count):\(.names[0:2] | join(" ")):\(.wait.op)"' "$WORK/parked.json")"
expect_eq "each waits on the pipe's read end" "$pipe_fd" \
	"$(jq -r '[.coroutines[] | select(.kind == "ucontext") | .wait.fd] | unique | map(tostring) | join(",")' "$WORK/parked.json")"
check "the text view has the group line" \
	grep -q "^$N x suspended in park_on_pipe <- coro_body" "$WORK/parked.txt"
exec 4>&-
parked_status=0
wait $parked || parked_status=$?
expect_eq "the program exits 0 once its input ends" 0 "$parked_status"
expect_eq "its output is its own" "parked $N fd $pipe_fd" "$(cat "$WORK/parked.out")"

# --- Errors --------------------------------------------------------------------------------------
# err NAME EXPECTED-STATUS PATTERN ARGS...: ctp-pstack ARGS exits EXPECTED-STATUS and says PATTERN.
err() {
	local name=$1 want=$2 pattern=$3
	shift 3
	local st=0
	$PSTACK "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || st=$?
	expect_eq "($name) exit status" "$want" "$st"
	check "($name) says: $pattern" grep -q "$pattern" "$WORK/$name.err"
	check "($name) writes nothing on stdout" test ! -s "$WORK/$name.out"
}
true &
gone=$!
wait $gone
err no_such_pid 1 "^ctp-pstack: no process $gone$" $gone
err not_a_pid 2 "not a process id: abc" abc
err no_pid 2 "^ctp-pstack: no PID given$" --json
# A usage error says what was wrong, the forms of the command and where the rest is, not the
# whole help.
check "(no_pid) shows the forms" grep -q "^usage: ctp-pstack" "$WORK/no_pid.err"
check "(no_pid) points at --help" grep -qx "Try 'ctp-pstack --help'." "$WORK/no_pid.err"
expect_eq "(no_pid) and no more" 6 "$(wc -l <"$WORK/no_pid.err")"
err two_pids 2 "^ctp-pstack: one PID, not 2$" 1 2
sleep 60 &
untraced=$!
at_exit kill $untraced
err untraced 4 "process $untraced is not traced by ctp.*ctp-run.*LD_PRELOAD" $untraced
# A process that has ended but not been reaped has closed its files: it is gone, not untraced.
bash -c 'sleep 0.1 & echo $! >"$1"; exec sleep 60' zombie_parent "$WORK/zombie.pid" &
at_exit kill $!
wait_line "$WORK/zombie.pid" '^[0-9]'
zombie=$(cat "$WORK/zombie.pid")
for _ in $(seq 600); do
	grep -q '^State:.*Z' /proc/$zombie/status 2>/dev/null && break
	sleep 0.05
done
err zombie 1 "process $zombie has ended" $zombie
# Another user's process: as root, look at root's `sleep` as nobody; otherwise at init's.
if [ "$(id -u)" = 0 ]; then
	PSTACK="setpriv --reuid=65534 --regid=65534 --clear-groups $PSTACK" err denied 5 \
		"permission denied" $untraced
else
	err denied 5 "permission denied" 1
fi
finish

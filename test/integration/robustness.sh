# ctp-run under trouble: a program that does not exist, a collector killed mid-run, an app
# killed with SIGKILL, a private run directory and two runs at once, an old trace kept; a file
# of the user's open in ctp-run (not the collector's to keep), ctp-run started with its stdin
# and stdout closed, and a collector out of file descriptors.
source "$(dirname "$0")/lib.sh"

BUSY=$PROGRAMS/ucontext_busy

# child_of PARENT NAME: the pid of PARENT's child process called NAME (empty if none).
child_of() {
	pgrep -P "$1" -x "$2" || true
}

has_child() {
	[ -n "$(child_of "$1" "$2")" ]
}

has_line() {
	grep -qx "$2" "$1"
}

# all_objects FILE: every line of FILE is a JSON object.
all_objects() {
	jq -e -s 'all(type == "object")' "$1" >/dev/null
}

# has_frame TRACE: a copy of TRACE taken now (TRACE.copy) holds a whole frame with switch lines:
# ctp-cat decodes it (into TRACE.copy.jsonl) as incomplete, since the collector is not finished.
has_frame() {
	cp "$1" "$1.copy"
	local st=0
	"$CTP_CAT" "$1.copy" >"$1.copy.jsonl" 2>/dev/null || st=$?
	[ "$st" -eq 1 ] && grep -q '"type":"switch"' "$1.copy.jsonl"
}

# (a) A program that does not exist: 127 and a message, as a shell says it.
st=0
"$CTP_RUN" -o "$WORK/a.jsonl.zst" nonexistent-program-ctp >"$WORK/a.out" 2>"$WORK/a.err" || st=$?
expect_eq "(a) a missing program: exit 127" 127 "$st"
check "(a) it says the program was not found" grep -q "nonexistent-program-ctp.*not found" "$WORK/a.err"

# (b) The collector killed mid-run: the app runs on to its normal end and status, and the trace
# it cut off reads up to its last frame: ctp-cat says it is incomplete (1) and prints every line
# the collector had written, the ones it could read before the kill included. The app runs until
# its standard input (a fifo the test holds) ends, after the kill.
mkfifo "$WORK/b.hold"
"$CTP_RUN" -o "$WORK/b.jsonl.zst" "$BUSY" 0 3 <"$WORK/b.hold" >"$WORK/b.out" 2>"$WORK/b.err" &
run=$!
exec 8>"$WORK/b.hold"
check "(b) the collector is there" wait_until 10 has_child $run ctp-collector
collector=$(child_of $run ctp-collector)
check "(b) the app has started" wait_until 10 has_line "$WORK/b.out" started
# A frame reaches the file within a second of its first line, or at 1 MiB of them: wait for the
# first, so that the kill cuts a trace that has something in it, and keep a copy of what was there.
check "(b) the collector has written a frame" wait_until 10 has_frame "$WORK/b.jsonl.zst"
check "(b) the collector is killed" kill -KILL "${collector:-none}"
exec 8>&-
st=0
wait $run || st=$?
expect_eq "(b) ctp-run exits with the app's status" 3 "$st"
check "(b) the app ran to its end" grep -q "^done switches [0-9]" "$WORK/b.out"
st=0
"$CTP_CAT" "$WORK/b.jsonl.zst" >"$WORK/b.all" 2>"$WORK/b.cat.err" || st=$?
expect_eq "(b) ctp-cat reads the cut trace as incomplete" 1 "$st"
check "(b) and says why (cut off, or no end line)" \
	grep -Eq "trace cut off at byte|trace has no end line" "$WORK/b.cat.err"
before=$(lines -c . "$WORK/b.jsonl.zst.copy.jsonl")
check "(b) it begins with the $before lines readable before the kill, unchanged" \
	cmp -s "$WORK/b.jsonl.zst.copy.jsonl" <(head -n "$before" "$WORK/b.all")
check "(b) every line printed is a whole JSON object" all_objects "$WORK/b.all"
lines -v '"type":"switch"' "$WORK/b.all" >"$WORK/b.jsonl"
expect_eq "(b) it begins with the header" trace "$(head -n 1 "$WORK/b.all" | jq -r .type)"
expect_eq "(b) it has the app's process line" "$BUSY" \
	"$(q b '[.[] | select(.type == "process") | .exe] | join(",")')"
ids=$(q b '[.[] | select(.type == "coro") | .coro] | join(",")')
switches=$(lines -c '"type":"switch"' "$WORK/b.all")
check "(b) it has switch lines ($switches)" [ "$switches" -gt 0 ]
expect_eq "(b) between the coroutines it announced ($ids)" 0 \
	"$(grep '"type":"switch"' "$WORK/b.all" | jq -s "[$ids] as \$ids | [.[] | select((.from as \$f
		| \$ids | index(\$f)) == null or (.to as \$t | \$ids | index(\$t)) == null)] | length")"
check "(b) and no end line (the collector never finished)" \
	[ "$(lines -c '"type":"end"' "$WORK/b.all")" -eq 0 ]

# (c) The app killed with SIGKILL: the trace is still whole, with the coroutines' final states
# and an exit line saying signal 9; ctp-run exits 128+9.
"$CTP_RUN" -o "$WORK/c.jsonl.zst" "$BUSY" 30000 0 >"$WORK/c.out" 2>"$WORK/c.err" &
run=$!
check "(c) the app is there" wait_until 10 has_child $run ucontext_busy
app=$(child_of $run ucontext_busy)
check "(c) the app has started" wait_until 10 has_line "$WORK/c.out" started
check "(c) the app is killed" kill -KILL "${app:-none}"
st=0
wait $run || st=$?
expect_eq "(c) ctp-run exits 128+9" 137 "$st"
st=0
"$CTP_CAT" "$WORK/c.jsonl.zst" >"$WORK/c.all" || st=$?
expect_eq "(c) the trace reads whole" 0 "$st"
# Without the switch lines: jq -s over all of them would be slow.
lines -v '"type":"switch"' "$WORK/c.all" >"$WORK/c.jsonl"
expect_eq "(c) the exit line says signal 9" "$app:9:null" \
	"$(q c '.[] | select(.type == "exit") | "\(.pid):\(.signal):\(.status)"')"
expect_eq "(c) one state line per coroutine" 5 "$(q c '[.[] | select(.type == "state")] | length')"
expect_eq "(c) 4 coroutines, suspended or running, and the thread" \
	"running:1 suspended:4" \
	"$(q c '[.[] | select(.type == "state") | .state] | group_by(.) | map("\(.[0]):\(length)") | join(" ")')"
expect_eq "(c) every suspended coroutine has its suspend stack" 0 \
	"$(q c '[.[] | select(.type == "state" and .state == "suspended" and .stack == null)] | length')"

# (d) The run directory is private (0700) and has no fixed name: two runs at once work, each
# with its own socket, and the directory is gone afterwards.
st=0
"$CTP_RUN" -o "$WORK/d.jsonl.zst" sh -c 'stat -c %a "$(dirname "$CTP_SOCKET")"' \
	>"$WORK/d.out" 2>"$WORK/d.err" || st=$?
expect_eq "(d) the app's view of its run directory's mode" 700 "$(cat "$WORK/d.out")"
"$CTP_RUN" -o "$WORK/d1.jsonl.zst" "$BUSY" 300 4 >"$WORK/d1.out" 2>"$WORK/d1.err" &
run1=$!
"$CTP_RUN" -o "$WORK/d2.jsonl.zst" "$BUSY" 300 5 >"$WORK/d2.out" 2>"$WORK/d2.err" &
run2=$!
st1=0 st2=0
wait $run1 || st1=$?
wait $run2 || st2=$?
expect_eq "(d) two runs at once: their statuses" "4 5" "$st1 $st2"
sock1=$(sed -n 's/^socket //p' "$WORK/d1.out")
sock2=$(sed -n 's/^socket //p' "$WORK/d2.out")
check "(d) two runs, two sockets ($sock1, $sock2)" [ -n "$sock1" -a -n "$sock2" -a "$sock1" != "$sock2" ]
check "(d) the run directories are removed" [ ! -e "$(dirname "$sock1")" -a ! -e "$(dirname "$sock2")" ]
for n in d1 d2; do
	st=0
	"$CTP_CAT" "$WORK/$n.jsonl.zst" >"$WORK/$n.all" || st=$?
	expect_eq "($n) the trace reads whole" 0 "$st"
	made=$(sed -n 's/^done switches //p' "$WORK/$n.out")
	switch_lines=$(lines -c '"type":"switch"' "$WORK/$n.all")
	lines -v '"type":"switch"' "$WORK/$n.all" >"$WORK/$n.jsonl"
	expect_eq "($n) its own exit line" "$([ $n = d1 ] && echo 4 || echo 5)" \
		"$(q $n '.[] | select(.type == "exit") | .status')"
	expect_eq "($n) switch lines + loss = the switches made" "$made" \
		"$((switch_lines + $(q $n '[.[] | select(.type == "loss") | .count] | add // 0')))"
done

# (e) An existing trace file is kept as FILE.old.
echo "previous run" >"$WORK/e.jsonl.zst"
st=0
"$CTP_RUN" -o "$WORK/e.jsonl.zst" "$PROGRAMS/ucontext_pingpong" 3 >/dev/null 2>&1 || st=$?
expect_eq "(e) the run" 0 "$st"
expect_eq "(e) the old file is FILE.old" "previous run" "$(cat "$WORK/e.jsonl.zst.old" 2>&1)"
st=0
"$CTP_CAT" "$WORK/e.jsonl.zst" >"$WORK/e.jsonl" || st=$?
expect_eq "(e) the new trace reads whole" 0 "$st"
expect_eq "(e) FILE is the new trace" 8 "$(q e '[.[] | select(.type == "switch")] | length')"

# (f) Short runs while another traced app keeps the machine busy: each trace has its process,
# however soon after its hello the app ends (the collector must not finish before it has read
# the hellos of connections it has not accepted yet).
"$CTP_RUN" -o "$WORK/f-busy.jsonl.zst" "$BUSY" 20000 0 >"$WORK/f-busy.out" 2>&1 &
busy_run=$!
empty=0 failed=0
for i in $(seq 1 30); do
	st=0
	"$CTP_RUN" -o "$WORK/f.jsonl.zst" "$PROGRAMS/ucontext_pingpong" 3 >/dev/null 2>&1 || st=$?
	[ "$st" -eq 0 ] || failed=$((failed + 1))
	st=0
	"$CTP_CAT" "$WORK/f.jsonl.zst" >"$WORK/f.jsonl" 2>/dev/null || st=$?
	[ "$st" -eq 0 ] && grep -q '"type":"exit"' "$WORK/f.jsonl" || empty=$((empty + 1))
done
# The busy app is only the load: stopped here, its status is not the point.
kill -TERM $busy_run 2>/dev/null || true
wait $busy_run || true
expect_eq "(f) 30 short runs under load: runs that did not exit 0" 0 "$failed"
expect_eq "(f) and traces not whole or without their process's exit" 0 "$empty"

# (g) ctp-run given fd 1500: the collector, its other child, does not hold it (it would keep a
# lock, or a pipe's reader waiting, past the program), and still says its summary when ctp-run
# had stdin and stdout closed (its ready pipe then takes fds 0 and 1).
# shellcheck disable=SC2016 # expanded by the traced shell
collector_fds='ls "/proc/$(pgrep -P "$PPID" -x ctp-collector)/fd"'
st=0
bash -c 'exec 1500>/dev/null; exec "$@"' _ "$CTP_RUN" -o "$WORK/g.jsonl.zst" -- \
	sh -c "$collector_fds" >"$WORK/g.fds" 2>"$WORK/g.err" || st=$?
expect_eq "(g) the run, with fd 1500 open" 0 "$st"
expect_eq "(g) the collector's fds listed, none of them 1500" "listed 0" \
	"$( (grep -qx 2 "$WORK/g.fds" && echo listed) || echo unlisted) $(grep -cx 1500 "$WORK/g.fds" || true)"
st=0
"$CTP_RUN" -o "$WORK/g2.jsonl.zst" -- /bin/true <&- >&- 2>"$WORK/g2.err" || st=$?
expect_eq "(g) stdin and stdout closed: the run, and the collector's summary" "0 1" \
	"$st $(grep -c '^ctp: 1 process' "$WORK/g2.err" || true)"

# (h) A limit of 64 open files and 40 processes at once, each of which the collector needs two
# fds for: it says once that it ran out, with the limit, not once a process; the program runs
# as untraced, and the trace it wrote is whole.
st=0
bash -c 'ulimit -n 64 && exec "$@"' _ "$CTP_RUN" -o "$WORK/h.jsonl.zst" -- \
	sh -c 'for i in $(seq 40); do sleep 1 & done; wait' 2>"$WORK/h.err" || st=$?
expect_eq "(h) the run" 0 "$st"
expect_eq "(h) one line says the collector ran out, and names the limit; none else of its own" \
	"1 0" "$(grep -c '^ctp-collector: out of file descriptors (limit 64)' "$WORK/h.err" || true) \
$(grep '^ctp-collector: ' "$WORK/h.err" | grep -vc 'out of file descriptors' || true)"
st=0
"$CTP_CAT" "$WORK/h.jsonl.zst" >/dev/null 2>&1 || st=$?
expect_eq "(h) ctp-cat reads the trace whole" 0 "$st"

finish

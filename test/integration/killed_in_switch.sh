# A program killed inside a switch hook, between its two station updates (the coroutine it leaves
# marked suspended, the one it resumes not yet running): the switch never happened, so the final
# states name the coroutine it was leaving as running there, and exactly one runs on the thread.
# And one killed inside a coroutine's end, after its station says exited and before the
# coroutine its thread goes back to is resumed: that one ran there. gdb stops the program at
# that very point (a breakpoint on the line, in every copy the compiler inlined) and kills it
# there, so each case is hit on every run; the core it writes there first reads the same in
# ctp-pstack --core. The gdb extension, stopped there, shows the same: the coroutine being left
# running on the thread, and the stacks of the others unwound from their saved contexts though
# the thread stopped in code inlined into the hook (gdb numbers those frames first).
source "$(dirname "$0")/lib.sh"

switch_path=$CTP_SOURCE_DIR/preload/switch_path.h
resume_line=$(grep -n 'ctp_station_resume(to_s, t->tid, now);' "$switch_path" | head -n 1 | cut -d: -f1)
check "the resume of a switch is found in switch_path.h" [ -n "$resume_line" ]

# Until its stdin ends: the test holds it open on a pipe.
mkfifo "$WORK/stdin"
"$CTP_RUN" -o "$WORK/k.jsonl.zst" "$PROGRAMS/ucontext_busy" 0 0 <"$WORK/stdin" \
	>"$WORK/k.out" 2>"$WORK/k.err" &
run=$!
exec 3>"$WORK/stdin"
at_exit kill -KILL $run
check "the app has started" wait_until 10 grep -qx started "$WORK/k.out"
app=$(pgrep -P $run -x ucontext_busy || true)
check "the app is there" [ -n "$app" ]
# ctp_bt_each: `ctp bt N 1` of each of ucontext_busy's coroutines, after an @btN mark.
ctp_bt_each=()
for n in 2 3 4 5; do ctp_bt_each+=(-ex "echo @bt$n\n" -ex "ctp bt $n 1"); done
timeout 60 gdb -q -batch -nx -ex "source $CTP_SOURCE_DIR/gdb/ctp.py" -p "${app:-0}" \
	-ex "break switch_path.h:$resume_line" -ex continue \
	-ex 'printf "leaving %d\n", (int)from_s->coro' -ex 'printf "resuming %d\n", (int)to_s->coro' \
	-ex 'echo @coroutines\n' -ex 'ctp coroutines' "${ctp_bt_each[@]}" -ex 'echo @end\n' \
	-ex "gcore $WORK/k.core" -ex kill >"$WORK/gdb.out" 2>&1 || true
leaving=$(sed -n 's/^leaving //p' "$WORK/gdb.out")
resuming=$(sed -n 's/^resuming //p' "$WORK/gdb.out")
check "gdb stopped it in a switch, from $leaving to $resuming" \
	[ -n "$leaving" -a -n "$resuming" -a "$leaving" != "$resuming" ]

# section MARK FILE: the lines between `@MARK` and the next `@` mark.
section() { awk -v m="@$1" '$0 == m {on = 1; next} /^@/ {on = 0} on' "$2"; }
# (gdb) Running: the coroutine the switch leaves, marked, and it alone.
expect_eq "(gdb) ctp coroutines: #$leaving runs, in a switch, and no other" \
	"#$leaving running (mid-switch)" \
	"$(section coroutines "$WORK/gdb.out" | awk '$3 == "running" {print $1, $3, $4}')"
expect_eq "(gdb) ctp coroutines counts 1 running" 1 \
	"$(section coroutines "$WORK/gdb.out" | grep -c '(1 running, 4 suspended)')"
# (gdb) Each of the others (2-5 run spin) unwinds from its saved context to spin, though the
# thread stopped in code inlined into the hook; the one running is refused, its stack being the
# thread's.
bt_tops="" expected_tops=""
for n in 2 3 4 5; do
	out=$(section "bt$n" "$WORK/gdb.out")
	if grep -q "coroutine $n is running on thread" <<<"$out"; then
		top=refused
	else
		top=$(sed -n 's/^#0 .* in \([a-z_]*\) (.*/\1/p' <<<"$out")
	fi
	want=spin
	[ "$n" != "$leaving" ] || want=refused
	bt_tops="$bt_tops $n:$top" expected_tops="$expected_tops $n:$want"
done
expect_eq "(gdb) ctp bt: each suspended coroutine in spin, the running one refused" \
	"$expected_tops" "$bt_tops"
exec 3>&-
st=0
wait $run || st=$?
expect_eq "ctp-run exits 128+9" 137 "$st"
st=0
"$CTP_CAT" "$WORK/k.jsonl.zst" | lines -v '"type":"switch"' >"$WORK/k.jsonl" || st=$?
expect_eq "the trace reads whole" 0 "$st"
expect_eq "the exit line says signal 9" "$app:9" \
	"$(q k '.[] | select(.type == "exit") | "\(.pid):\(.signal)"')"
expect_eq "4 coroutines and the thread: one running, the rest suspended" \
	"running:1 suspended:4" \
	"$(q k '[.[] | select(.type == "state") | .state] | group_by(.) | map("\(.[0]):\(length)") | join(" ")')"
expect_eq "the one running is the one the switch was leaving" "$leaving" \
	"$(q k '.[] | select(.type == "state" and .state == "running") | .coro')"
expect_eq "the one it was to resume is suspended" "suspended" \
	"$(q k ".[] | select(.type == \"state\" and .coro == ${resuming:-0}) | .state")"
# The report counts as stuck only those suspended at the end: not the one that ran.
"$CTP_CAT" --report "$WORK/k.jsonl.zst" >"$WORK/report" 2>&1 || true
check "the report lists the stuck coroutines" \
	grep -q "^  coroutines: \(#[0-9]* \)*#[0-9]*$" "$WORK/report"
check "the report does not list #$leaving as stuck" \
	bash -c "! grep '^  coroutines:' '$WORK/report' | grep -qw '#$leaving'"

# (core) The core gdb wrote at that moment, read by ctp-pstack: the same coroutine runs.
st=0
"$CTP_BUILD_DIR/pstack/ctp-pstack" --json --core "$WORK/k.core" "$PROGRAMS/ucontext_busy" \
	>"$WORK/core.json" 2>"$WORK/core.err" || st=$?
expect_eq "(core) ctp-pstack --core reads it" 0 "$st"
expect_eq "(core) one runs, the one the switch was leaving, on the stopped thread" \
	"$leaving:$app" \
	"$(jq -r '[.coroutines[] | select(.state == "running") | "\(.coro):\(.tid)"] | join(" ")' "$WORK/core.json")"
rm -f "$WORK/k.core"

# (end) ucontext_exits' first coroutine returns, and glibc goes back to main through uc_link:
# stopped after its end's station update (exited, naming main's station next), before main's
# resume. The plain form, under gdb; the runner waits for the collector the preload starts.
end_line=$(grep -n 'emit_exit(t, now, from_coro, how);' "$CTP_SOURCE_DIR/preload/events.c" |
	head -n 1 | cut -d: -f1)
check "(end) the end's record is found in events.c" [ -n "$end_line" ]
/usr/bin/python3 "$CTP_SOURCE_DIR/test/transparency/tp_run.py" --out "$WORK/e.gdb" \
	--err "$WORK/e.err" --status "$WORK/e.status" --cwd "$WORK" --timeout 60 \
	--unset CTP_SOCKET --unset CTP_COLLECTOR -- \
	gdb -q -batch -nx -ex "source $CTP_SOURCE_DIR/gdb/ctp.py" -ex 'set startup-with-shell off' \
	-ex "set environment LD_PRELOAD=$CTP_BUILD_DIR/preload/libctp_preload.so" \
	-ex "set environment CTP_OUTPUT=$WORK/e.jsonl.zst" -ex 'set breakpoint pending on' \
	-ex "break events.c:${end_line:-0}" -ex run \
	-ex 'printf "ending %d, its station %d, next %d\n", (int)t->current_station->coro, t->current_station->state, t->self_station->state' \
	-ex 'echo @coroutines\n' -ex 'ctp coroutines' -ex 'echo @end\n' \
	-ex kill --args "$PROGRAMS/ucontext_exits"
expect_eq "(end) gdb stopped it after the end's station update, before main's resume" \
	"ending 2, its station 4, next 3" "$(grep '^ending' "$WORK/e.gdb")"
expect_eq "(end, gdb) ctp coroutines: main runs, in the end's switch, and no other" \
	"#1 running (mid-switch)" \
	"$(section coroutines "$WORK/e.gdb" | awk '$3 == "running" {print $1, $3, $4}')"
st=0
"$CTP_CAT" "$WORK/e.jsonl.zst" >"$WORK/e.jsonl" || st=$?
expect_eq "(end) the trace reads whole" 0 "$st"
expect_eq "(end) main runs, the coroutine that returned has ended" "1:running 2:exited" \
	"$(q e '[.[] | select(.type == "state" and (.coro == 1 or .coro == 2)) | "\(.coro):\(.state)"] | join(" ")')"
expect_eq "(end) one coroutine runs" 1 "$(q e '[.[] | select(.type == "state" and .state == "running")] | length')"

finish

# A stalled collector: a SOCK_SEQPACKET listener with a backlog of 1 that never accepts, named by
# CTP_SOCKET (no ctp-run). Eight traced runs at once must each run to completion (bound: 30 s)
# and print what the untraced run prints. No trace can exist; none is checked.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
sock=$WORK/stalled.sock
coproc LISTENER { exec "$TP_PYTHON" "$TP_SRC/stalled_listener.py" "$sock"; }
listener_pid=$LISTENER_PID
read -r line <&"${LISTENER[0]}" || line=
expect_eq "the stalled listener is listening" ready "$line"

tp_run_one stalled native 0 -- "$TP_BIN/coro_work"
expect_eq "stalled untraced ends" "exit 0" "$(head -n 1 "$WORK/stalled.native.status")"
pids=()
for i in $(seq 8); do
	tp_run_one stalled "traced$i" 0 --timeout 30 --env "LD_PRELOAD=$TP_PRELOAD" \
		--env "CTP_SOCKET=$sock" -- "$TP_BIN/coro_work" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || echo "    runner $p failed" >&2
done
for i in $(seq 8); do
	expect_eq "stalled run $i: ends as untraced" "exit 0" "$(head -n 1 "$WORK/stalled.traced$i.status")"
	same_file "stalled run $i: stdout" "$WORK/stalled.native.out" "$WORK/stalled.traced$i.out"
	grep -v '^ctp: ' "$WORK/stalled.traced$i.err" >"$WORK/stalled.traced$i.err.app" || true
	same_file "stalled run $i: stderr (without ctp: lines)" "$WORK/stalled.native.err" \
		"$WORK/stalled.traced$i.err.app"
done
{ grep -h '^ctp: ' "$WORK"/stalled.traced*.err | sort | uniq -c | head -n 3; } || true
exec {LISTENER[1]}>&-
wait "$listener_pid" || true
finish

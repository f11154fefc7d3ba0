# A collector that reads everything late, as a starved one does: it is stopped (SIGSTOP) while
# the traced program runs, forks a child and exits at once, and the child runs and exits too;
# only after ctp-run has seen the program end is the collector let go on. Then it finds at one
# go the launcher's close, the program's hello, its FORKED notice and the connection its fork
# child passed on it (CTP_MSG_CONNECT): it must take the child in, not end the run without it.
source "$(dirname "$0")/lib.sh"

PROG=$CTP_BUILD_DIR/test/transparency/leave_children
mkfifo "$WORK/go"
"$CTP_RUN" -o "$WORK/late.jsonl.zst" -- sh -c 'read -r go; exec "$0" fork' "$PROG" \
	<"$WORK/go" >"$WORK/late.out" 2>"$WORK/late.err" &
run=$!
exec 8>"$WORK/go"
collector_of() { pgrep -P "$1" -x ctp-collector; }
check "the collector is there" wait_until 30 collector_of $run
collector=$(collector_of $run)
check "it is stopped" kill -STOP "${collector:-none}"
echo go >&8
exec 8>&-
child_done() { grep -qx "child done" "$WORK/late.out"; }
check "the program left and its fork child ran to its end meanwhile" wait_until 30 child_done
# ctp-run has seen the program end once it has no child but the collector.
only_collector() { [ "$(pgrep -P $run | grep -vx "${collector:-none}" | wc -l)" -eq 0 ]; }
check "ctp-run has seen the program end" wait_until 30 only_collector
check "the collector goes on" kill -CONT "${collector:-none}"
st=0
wait $run || st=$?
expect_eq "ctp-run exits as the program did" 0 "$st"
cat_status=0
"$CTP_CAT" "$WORK/late.jsonl.zst" >"$WORK/late.jsonl" || cat_status=$?
expect_eq "ctp-cat reads the trace whole" 0 "$cat_status"
parent=$(q late '[.[] | select(.type == "process" and (.exe | endswith("/leave_children")))][0].pid // 0')
child=$(q late "[.[] | select(.type == \"process\" and .ppid == $parent) | .pid][0] // 0")
check "the fork child is in the trace, under its parent ($child)" [ "$child" -gt 0 ]
expect_eq "with its 2 switches and its exit" "2 0" \
	"$(q late "[.[] | select(.type == \"switch\" and .pid == $child)] | length") $(q late \
		"[.[] | select(.type == \"exit\" and .pid == $child)][0].status")"
finish

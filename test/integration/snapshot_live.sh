# A snapshot in a live trace: SIGUSR1 to the collector writes every coroutine's state now,
# so that ctp-cat --report on the trace still being written is exact up to that moment. The
# lost-wakeup server is left hanging (client --hold); before the signal the live trace has no
# states; after it, the report names the 47 lost wakeups, certain. Then the run ends as
# always: same server output and exit, a whole trace with the final states after the
# snapshot's, and the same report.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

# live_lines TYPE: how many lines of TYPE the live trace holds now (ctp-cat says it is
# incomplete: it is still being written).
live_lines() {
	{ "$CTP_CAT" "$WORK/lw.jsonl.zst" 2>/dev/null || true; } |
		jq -r --arg t "$1" 'select(.type == $t) | .type' | wc -l
}

K=47
hang_example
collector=$(pgrep -P $run_pid -x ctp-collector)

expect_eq "no snapshot before it is asked for" 0 "$(live_lines snapshot)"
expect_eq "no state lines while the process runs" 0 "$(live_lines state)"
kill -USR1 "$collector"
for _ in $(seq 600); do
	[ "$(live_lines snapshot)" -ge 1 ] && break
	sleep 0.05
done
expect_eq "one snapshot line, at once in the live trace" 1 "$(live_lines snapshot)"
expect_eq "a state line for each of the 48 live coroutines and 4 threads" 52 "$(live_lines state)"
check "the collector and the server run on" kill -0 "$collector" "$run_pid"

report_status=0
"$CTP_CAT" --report --json "$WORK/lw.jsonl.zst" >"$WORK/live.json" 2>/dev/null || report_status=$?
r() { jq -r "$1" "$WORK/live.json"; }
expect_eq "the live report exits 3 on lost wakeups" 3 "$report_status"
expect_eq "exactly $K lost wakeups on the live trace" $K \
	"$(r '[.findings[] | select(.kind == "lost_wakeup")] | length')"
expect_eq "certain, though the trace is still being written" "false:0" \
	"$(r '"\(.summary.uncertain):\([.findings[] | select(.uncertain)] | length)"')"
live_fds=$(r '[.findings[] | select(.kind == "lost_wakeup") | .fd] | sort | map(tostring) | join(" ")')
expect_eq "each with its whole suspend stack, not only the call site" $K \
	"$(r '[.findings[] | select(.kind == "lost_wakeup" and .stack[0] == "sched_wait_readable"
		and (.stack | index("conn_main")))] | length')"

end_hung_example
expect_eq "the live report named the fds the server stranded" "$stranded" "$live_fds "

cat_status=0
"$CTP_CAT" "$WORK/lw.jsonl.zst" >"$WORK/lw.jsonl" || cat_status=$?
expect_eq "the finished trace is whole" 0 "$cat_status"
expect_eq "the final states follow the snapshot's: 52 + 65" 117 \
	"$(q lw '[.[] | select(.type == "state")] | length')"
report lw
expect_eq "the finished trace reports the same, with the exit" "3:$K:false:0" \
	"$report_status:$(rq lw '[.findings[] | select(.kind == "lost_wakeup")] | length'):$(rq lw .summary.uncertain):$(rq lw .summary.process_list[0].exit.status)"
finish

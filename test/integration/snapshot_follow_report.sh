# ctp-cat --follow --report on a live trace: a report at each whole snapshot, and the last one at
# the end. The lost-wakeup server is left hanging (client --hold); one follower writes JSON
# Lines, asked for a snapshot by `ctp-cat --snapshot`; another writes text reports into a
# file and asks for snapshots itself (--snapshot-every). Each names the 47 lost wakeups as
# certain while the server still runs; when the run ends, each writes its final report and
# exits 3.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

K=47
TRACE=$WORK/lw.jsonl.zst
hang_example
collector=$(pgrep -P $run_pid -x ctp-collector)

# (fd 3 is the client's hold: the followers must not keep it open.)
"$CTP_CAT" --follow --report --json "$TRACE" >"$WORK/follow.jsonl" 2>"$WORK/follow.err" 3>&- &
json_pid=$!
at_exit kill $json_pid
# It asks at its start; an hour is longer than any run, so no second request comes.
"$CTP_CAT" --follow --report --snapshot-every=1h "$TRACE" >"$WORK/follow.txt" \
	2>"$WORK/follow_txt.err" 3>&- &
text_pid=$!
at_exit kill $text_pid

# The text follower asked at its start: its report comes without anyone else asking.
wait_line "$WORK/follow.txt" '^=== ctp-cat --follow --report, report 1 at .*: snapshot'
expect_eq "the text follower's first report is of a snapshot" 1 \
	"$(grep -c '^=== ctp-cat --follow --report, report' "$WORK/follow.txt")"
check "it names the $K lost wakeups" grep -q "^LOST WAKEUP: $K coroutines" "$WORK/follow.txt"
check "none of them uncertain" sh -c "! grep -q uncertain '$WORK/follow.txt'"
check "the collector and the server run on" kill -0 "$collector" "$run_pid"

# The JSON follower saw that snapshot too; ask for another one by the trace's name.
wait_line "$WORK/follow.jsonl" '"report":1,'
ask_status=0
"$CTP_CAT" --snapshot "$TRACE" >"$WORK/ask.out" 2>&1 || ask_status=$?
expect_eq "ctp-cat --snapshot finds the collector writing the trace" \
	"0:ctp-cat: asked ctp-collector (pid $collector) for a snapshot into $TRACE" \
	"$ask_status:$(cat "$WORK/ask.out")"
wait_line "$WORK/follow.jsonl" '"report":2,'
j() { sed -n "$1p" "$WORK/follow.jsonl" | jq -r "$2"; }
expect_eq "one JSON document per report, a live one" "2:false" "$(j 2 '"\(.refresh.report):\(.refresh.final)"')"
expect_eq "the second report is of the later snapshot" true \
	"$(j 2 "[.refresh.snapshot_ts > $(j 1 .refresh.snapshot_ts), .refresh.snapshot_ts == .summary.process_list[0].exit.snapshot] | all")"
expect_eq "exactly $K lost wakeups, certain, while the server runs" "$K:false:0" \
	"$(j 2 '"\([.findings[] | select(.kind == "lost_wakeup")] | length):\(.summary.uncertain):\([.findings[] | select(.uncertain)] | length)"')"
expect_eq "each with its whole suspend stack" $K \
	"$(j 2 '[.findings[] | select(.kind == "lost_wakeup" and .stack[0] == "sched_wait_readable"
		and (.stack | index("conn_main")))] | length')"

# The run ends: both followers write their last report and exit 3.
exec 3>&-
wait $client_pid || true
status=0
wait $run_pid || status=$?
expect_eq "the server stopped by itself, status 0" 0 "$status"
json_status=0
wait $json_pid || json_status=$?
text_status=0
wait $text_pid || text_status=$?
expect_eq "both followers exit 3: their last reports have findings" "3:3" "$json_status:$text_status"
reports=$(wc -l <"$WORK/follow.jsonl")
expect_eq "the JSON follower: the two snapshots and the end" 3 "$reports"
expect_eq "the last report is the final one, of the whole trace, with the exit" \
	"3:true:true:0:$K:false" \
	"$(j 3 '"\(.refresh.report):\(.refresh.final):\(.summary.complete):\(.summary.process_list[0].exit.status):\([.findings[] | select(.kind == "lost_wakeup")] | length):\(.summary.uncertain)"')"
report lw
expect_eq "the same findings as ctp-cat --report on the finished trace" \
	"$(rq lw '[.findings[] | [.kind, .coro, .fd]] | tostring')" \
	"$(j 3 '[.findings[] | [.kind, .coro, .fd]] | tostring')"
check "the text follower ends with its final report" \
	grep -q '^=== ctp-cat --follow --report, report [0-9]* at .*: the end of following ===$' \
	"$WORK/follow.txt"
expect_eq "nothing on the followers' stderr" "" "$(cat "$WORK/follow.err" "$WORK/follow_txt.err")"

ask_status=0
"$CTP_CAT" --snapshot "$TRACE" >"$WORK/ask.out" 2>&1 || ask_status=$?
expect_eq "--snapshot on a finished trace: 2, nobody writes it" \
	"2:ctp-cat: $TRACE: cannot ask for a snapshot: no ctp-collector is writing it" \
	"$ask_status:$(cat "$WORK/ask.out")"
finish

# The lost-wakeup example, traced with the real binaries: the server strands every coroutine
# whose client hung up while it was parked reading. The report must find exactly those: one
# lost_wakeup per stranded coroutine, with the fds the server logged, op read, the suspend stack
# in the server's read wait, and the close in the function that dropped the connection.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

K=47 # the client closes 47 of its 60 connections abruptly
example lw
expect_eq "the client ran to its end" 0 "$client_status"
expect_eq "the server stopped by itself, status 0" 0 "$status"
stranded=$(sed -n 's/^stranded fd //p' "$WORK/lw.out" | sort -n | tr '\n' ' ')
expect_eq "the server stranded $K coroutines" $K "$(wc -w <<<"$stranded")"

report lw
expect_eq "--report exits 3 on lost wakeups" 3 "$report_status"
expect_eq "nothing lost, whole trace" "0:true" "$(rq lw '"\(.summary.lost):\(.summary.complete)"')"
expect_eq "exactly $K lost wakeups" $K "$(rq lw '[.findings[] | select(.kind == "lost_wakeup")] | length')"
expect_eq "their fds are the ones the server stranded" "$stranded" \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup") | .fd] | sort | map(tostring) | join(" ") + " "')"
expect_eq "each waits to read" "read" \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup") | .op] | unique | join(",")')"
expect_eq "each suspended in the server's read wait, called from its line reader" $K \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup" and .stack[0] == "sched_wait_readable"
		and (.stack | index("conn_read_line")))] | length')"
expect_eq "each has the suspend stack's file:line" $K \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup" and (.frames[0].file | endswith("sched.c"))
		and .frames[0].line > 0)] | length')"
expect_eq "each fd was closed by the function that drops connections" $K \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup" and .close.stack[0] == "poller_drop_connection")] | length')"
closer=$(rq lw '[.findings[] | select(.kind == "lost_wakeup") | .close.coro] | unique | join(",")')
expect_eq "one closer: the polling thread's own stack, not a coroutine" "thread" \
	"$(q lw ".[] | select(.type == \"coro\" and .coro == ${closer:-0}) | .kind")"
expect_eq "each was closed after it suspended" 0 \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup" and .close.ts < .suspended_at)] | length')"
expect_eq "no missed readiness: the lost wakeups explain the readiness of the dead fds" 0 \
	"$(rq lw '[.findings[] | select(.kind == "missed_readiness")] | length')"
expect_eq "one cause, one incident: the $K lost wakeups share theirs" "1 1" \
	"$(rq lw '"\([.findings[] | select(.kind == "lost_wakeup") | .incident] | unique | length) \(.summary.incidents.lost_wakeup)"')"
expect_eq "the stranded coroutines are not listed again as stuck or leaked" 0 \
	"$(rq lw '[.findings[] | select(.kind == "lost_wakeup") | .coro] as $lost
		| [.findings[] | select(.kind == "stuck" or .kind == "leak") | .coros[]
			| select(. as $c | $lost | index($c))] | length')"

# The text report tells the same story, once, with the close site.
text_status=0
"$CTP_CAT" --report "$WORK/lw.jsonl.zst" >"$WORK/lw.txt" || text_status=$?
expect_eq "the text report exits 3 too" 3 "$text_status"
check "the text report tells the lost wakeups once" grep -q "^LOST WAKEUP: $K coroutines" "$WORK/lw.txt"
check "and counts them as one incident" grep -q "^Findings: 1 lost_wakeup ($K coroutines)" "$WORK/lw.txt"
check "the text report names the close site with file:line" \
	grep -Eq "^    poller_drop_connection \(sched.c:[0-9]+\)" "$WORK/lw.txt"
finish

# A lost wakeup: a coroutine waits on a socket (its read would block) and the scheduler closes
# that socket without resuming it. The trace must say who waited (a would_block fd line), who
# closed it under the waiter (a close fd line naming the waiter, with the closer's stack), and the
# waiter's final state must still say what it waits on, closed. Resumed properly, nothing of the
# kind may be claimed.
source "$(dirname "$0")/lib.sh"

trace lost -- "$PROGRAMS/io_attribution" lost
expect_eq "lost: the app exits 0" 0 "$status"
fd=$(cat "$WORK/lost.out")
reader=$(q lost '.[] | select(.type == "coro" and .entry == "reader") | .coro')
check "lost: the reader coroutine is in the trace ($reader)" [ -n "$reader" ]

expect_eq "lost: the reader's read would block on fd $fd" "read" \
	"$(q lost ".[] | select(.type == \"fd\" and .event == \"would_block\" and .fd == $fd
		and .coro == $reader) | .op")"
expect_eq "lost: the would_block stack starts in the reader" "reader" \
	"$(q lost "(map(select(.type == \"stack\") | {key: (.id | tostring), value: .frames})
		| from_entries) as \$s | .[] | select(.type == \"fd\" and .event == \"would_block\"
		and .fd == $fd) | \$s[.stack | tostring][0].sym")"

close_line=$(q lost ".[] | select(.type == \"fd\" and .event == \"close\" and .fd == $fd)
	| \"\(.waiter) \(.op) \(.coro)\"")
expect_eq "lost: the close names the reader as waiter, op read" "$reader read 1" "$close_line"
expect_eq "lost: the closer's stack names close_lost_fd, then main" "close_lost_fd main" \
	"$(q lost "(map(select(.type == \"stack\") | {key: (.id | tostring), value: .frames})
		| from_entries) as \$s | .[] | select(.type == \"fd\" and .event == \"close\"
		and .fd == $fd) | \$s[.stack | tostring][0:2] | map(.sym) | join(\" \")")"

expect_eq "lost: the reader's final state waits on fd $fd, read, closed" \
	"suspended {\"fd\":$fd,\"op\":\"read\",\"closed\":true}" \
	"$(q lost ".[] | select(.type == \"state\" and .coro == $reader)
		| \"\(.state) \(.wait | tojson)\"")"
expect_eq "lost: no other coroutine claims a wait" 1 \
	"$(q lost '[.[] | select(.type == "state" and .wait != null)] | length')"

trace resumed -- "$PROGRAMS/io_attribution" resumed
expect_eq "resumed: the app exits 0" 0 "$status"
fd=$(cat "$WORK/resumed.out")
reader=$(q resumed '.[] | select(.type == "coro" and .entry == "reader") | .coro')
expect_eq "resumed: the reader's read would block on fd $fd" "read" \
	"$(q resumed ".[] | select(.type == \"fd\" and .event == \"would_block\" and .fd == $fd
		and .coro == $reader) | .op")"
expect_eq "resumed: the close of fd $fd names no waiter" "null null" \
	"$(q resumed ".[] | select(.type == \"fd\" and .event == \"close\" and .fd == $fd)
		| \"\(.waiter) \(.op)\"")"
expect_eq "resumed: the reader exited" exited \
	"$(q resumed ".[] | select(.type == \"state\" and .coro == $reader) | .state")"
expect_eq "resumed: no final state has a wait" 0 \
	"$(q resumed '[.[] | select(.type == "state" and .wait != null)] | length')"

finish

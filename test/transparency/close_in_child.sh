# Closes made by children in the program's memory (vfork, clone(CLONE_VM)) and by a fork child,
# of an fd a coroutine waits on: the program runs as untraced, and the trace shows the
# coroutine's wait and exactly one close of the fd, the program's own at the end.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare close_in_child --expect "exit 0" -- "$TP_BIN/close_in_child"
check "close_in_child: untraced, the reader got its byte" \
	grep -qx "the reader got 'x'" "$WORK/close_in_child.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid close_in_child "$mode" close_in_child)
	fd_events="[.[] | select(.type == \"fd\" and .pid == ${pid:-0})]"
	# Tracer correctness: the read end (the fd the coroutine waited on) is closed once, after
	# the wait, without a waiter (the reader was resumed by then).
	expect_eq "close_in_child $mode (tracer correctness): the wait, then one close" \
		'["would_block","close"]' \
		"$(tq close_in_child "$mode" "($fd_events | map(select(.event == \"would_block\"))[0].fd)
			as \$fd | [$fd_events[] | select(.fd == \$fd and
			(.event == \"would_block\" or .event == \"close\")) | .event] | tojson")"
	expect_eq "close_in_child $mode (tracer correctness): the close names no waiter" null \
		"$(tq close_in_child "$mode" "[$fd_events[] | select(.event == \"close\")][0].waiter")"
done
finish

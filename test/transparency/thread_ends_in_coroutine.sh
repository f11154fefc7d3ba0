# Threads that end while a coroutine of theirs runs (pthread_exit in it, cancellation in hooked
# read and poll): the program runs as untraced, cleanup handlers and join values included. In
# the trace, each such coroutine ends with its thread, after the thread's own coroutine left
# for it, instead of running on at the end on a thread that is gone; the coroutine a thread left
# suspended stays alive, resumed by main, and returns.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare thread_ends_in_coroutine --expect "exit 0" -- "$TP_BIN/thread_ends_in_coroutine"
expect_eq "thread_ends_in_coroutine: untraced, every way ran its course" \
	"$(for w in "pthread_exit:42:1" "cancelled in read:PTHREAD_CANCELED:1" \
		"cancelled in poll:PTHREAD_CANCELED:1" "returns:7:0"; do
		IFS=: read -r way ret n <<<"$w"
		echo "$way: the thread ended with $ret, cleanups $n; its pipe then wrote 1, read 1 'x', errno 0"
	done
	echo "returns: its coroutine resumed by main, on main's thread"
	echo "returns: its coroutine returned, cleanups 0")" \
	"$(cat "$WORK/thread_ends_in_coroutine.native.out")"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid thread_ends_in_coroutine "$mode" thread_ends_in_coroutine)
	expect_eq "thread_ends_in_coroutine $mode (tracer correctness): how each coroutine ended" \
		'["thread_exit","thread_exit","thread_exit","returned"]' \
		"$(tp_end_hows thread_ends_in_coroutine "$mode" "$pid")"
	# Each of the three ended on its own thread, when that thread's own coroutine did.
	expect_eq "thread_ends_in_coroutine $mode (tracer correctness): each ended with its thread" \
		'[true,true,true]' "$(tq thread_ends_in_coroutine "$mode" "
		[.[] | select(.type == \"coro_end\" and .pid == $pid)] as \$e |
		[.[] | select(.type == \"coro\" and .pid == $pid and .kind == \"thread\")] as \$t |
		[$(tp_ucontext_coros "$pid")[:3][] | .parent as \$p | .coro as \$c |
		 (\$e[] | select(.coro == \$c)) as \$mine | (\$e[] | select(.coro == \$p)) as \$its |
		 \$mine.tid == \$its.tid and \$mine.ts == \$its.ts and
		 (\$t | any(.coro == \$p and .tid == \$mine.tid))] | tojson")"
	expect_eq "thread_ends_in_coroutine $mode (tracer correctness): none runs at the end" \
		'["running"]' "$(tq thread_ends_in_coroutine "$mode" "
		[.[] | select(.type == \"state\" and .pid == $pid and .state == \"running\") | .state]
		| tojson")"
done
finish

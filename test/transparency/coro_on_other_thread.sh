# A coroutine main makes on an array in another thread's stack, left suspended when that thread
# exits; a late thread then runs on the same stack (glibc reuses it) and switches from frames
# where the array was. The program runs as untraced; in the trace, the coroutine ended
# (abandoned) when its lender exited, and every switch back to the late thread is the late
# thread's, none the old coroutine's.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare coro_on_other_thread --expect "exit 0" -- "$TP_BIN/coro_on_other_thread"
check "coro_on_other_thread: untraced, the late thread switched from inside the lent array" \
	grep -qx "guest ran 1 time(s); the late thread switched 200 times, from inside the lent array: yes" \
	"$WORK/coro_on_other_thread.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid coro_on_other_thread "$mode" coro_on_other_thread)
	# The guest is the first ucontext coroutine; the heap one the second.
	expect_eq "coro_on_other_thread $mode (tracer correctness): switches to and from each" \
		'[[1,1],[200,200]]' "$(tp_switch_counts coro_on_other_thread "$mode" "$pid")"
	expect_eq "coro_on_other_thread $mode (tracer correctness): how each ended" \
		'["abandoned",""]' "$(tp_end_hows coro_on_other_thread "$mode" "$pid")"
	# The heap coroutine's 200 suspends went back to the late thread's own coroutine.
	expect_eq "coro_on_other_thread $mode (tracer correctness): the late thread resumed" \
		'["thread"]' "$(tq coro_on_other_thread "$mode" ". as \$l |
			($(tp_ucontext_coros "$pid") | .[1].coro) as \$h |
			[\$l[] | select(.type == \"switch\" and .from == \$h) | .to] | unique as \$to |
			[\$l[] | select(.type == \"coro\" and .pid == $pid and
				(.coro as \$c | \$to | any(. == \$c))) | .kind] | tojson")"
done
finish

# 64 threads released at once, each making 40 coroutines: their rings and station chunks are
# allocated from the segment together, under its growth lock. The program runs as untraced, and
# the trace has every thread, and every coroutine with its own switches (2 to each: its start
# and one resume; 2 from each: its suspend and its return).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare threads_grow_together --expect "exit 0" -- "$TP_BIN/threads_grow_together"
check "threads_grow_together: untraced, every coroutine ran" \
	grep -qx "64 threads, 2560 coroutines, 5120 runs" "$WORK/threads_grow_together.native.out"
for mode in "${TP_MODES[@]}"; do
	name=threads_grow_together
	pid=$(tp_app_pid $name "$mode" $name)
	expect_eq "$name $mode (tracer correctness): 65 threads" 65 \
		"$(tq $name "$mode" "[.[] | select(.type == \"coro\" and .pid == ${pid:-0} and .kind == \"thread\")] | length")"
	expect_eq "$name $mode (tracer correctness): 2560 ucontext coroutines, ids all distinct" \
		"2560 2560" "$(tq $name "$mode" "$(tp_ucontext_coros "$pid") | \"\\(length) \\(map(.coro) | unique | length)\"")"
	expect_eq "$name $mode (tracer correctness): 2 switches to and 2 from each" \
		'[[2,2]]' "$(tp_switch_counts $name "$mode" "$pid" | jq -c unique)"
	expect_eq "$name $mode (tracer correctness): each returned" '["returned"]' \
		"$(tp_end_hows $name "$mode" "$pid" | jq -c unique)"
done
finish

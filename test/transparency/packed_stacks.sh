# Coroutines on 4 KiB stacks packed side by side, offset by 2 KiB, so that every page meets two
# of them (the stack map's two candidates a page): the program runs as untraced, and every
# switch to and from each coroutine is its own in the trace (4 to each: its start and 3 resumes;
# 4 from each: 3 suspends and its return).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare packed_stacks --expect "exit 0" -- "$TP_BIN/packed_stacks"
check "packed_stacks: untraced, every coroutine ran its rounds" \
	grep -qx "24 coroutines, 72 runs" "$WORK/packed_stacks.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid packed_stacks "$mode" packed_stacks)
	expect_eq "packed_stacks $mode (tracer correctness): 24 ucontext coroutines" 24 \
		"$(tq packed_stacks "$mode" "$(tp_ucontext_coros "$pid") | length")"
	expect_eq "packed_stacks $mode (tracer correctness): 4 switches to and 4 from each" \
		'[[4,4]]' "$(tp_switch_counts packed_stacks "$mode" "$pid" | jq -c unique)"
	expect_eq "packed_stacks $mode (tracer correctness): each returned" '["returned"]' \
		"$(tp_end_hows packed_stacks "$mode" "$pid" | jq -c unique)"
done
finish

# Coroutines on stacks packed side by side so that every unit of the stack map meets two of them
# (its two candidates a unit): 600 stacks of 4 KiB offset by 2 KiB (the map of pages), and 12 of
# 96 KiB and 16 KiB in turn (large stacks two to a 64 KiB chunk, a small one between them). The
# program runs as untraced, and every switch to and from each coroutine is its own in the trace
# (4 to each: its start and 3 resumes; 4 from each: 3 suspends and its return).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for layout in small mixed; do
	name=packed_stacks_$layout
	coros=600
	[ "$layout" = mixed ] && coros=12
	compare "$name" --expect "exit 0" -- "$TP_BIN/packed_stacks" "$layout"
	check "$name: untraced, every coroutine ran its rounds" \
		grep -qx "$coros coroutines, $((coros * 3)) runs" "$WORK/$name.native.out"
	for mode in "${TP_MODES[@]}"; do
		pid=$(tp_app_pid "$name" "$mode" packed_stacks)
		expect_eq "$name $mode (tracer correctness): $coros ucontext coroutines" "$coros" \
			"$(tq "$name" "$mode" "$(tp_ucontext_coros "$pid") | length")"
		expect_eq "$name $mode (tracer correctness): 4 switches to and 4 from each" \
			'[[4,4]]' "$(tp_switch_counts "$name" "$mode" "$pid" | jq -c unique)"
		expect_eq "$name $mode (tracer correctness): each returned" '["returned"]' \
			"$(tp_end_hows "$name" "$mode" "$pid" | jq -c unique)"
	done
done
finish

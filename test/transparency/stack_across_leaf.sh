# Coroutine stacks across a 16 MiB boundary (the stack map's nodes cover 16 MiB each): the
# program runs as untraced; every resume of the first coroutine, above the boundary and below
# it, is a switch to that coroutine, it ends once, at its return; the second ends (abandoned)
# when the half of its stack below the boundary is unmapped under it.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_across_leaf --expect "exit 0" -- "$TP_BIN/stack_across_leaf"
check "stack_across_leaf: untraced, the first coroutine ran to its end" \
	grep -qx "first: 7 resumes, sum 3075" "$WORK/stack_across_leaf.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_across_leaf "$mode" stack_across_leaf)
	expect_eq "stack_across_leaf $mode (tracer correctness): two ucontext coroutines" 2 \
		"$(tq stack_across_leaf "$mode" "$(tp_ucontext_coros "$pid") | length")"
	# 7 switches to the first (its start and six resumes, on each side of the boundary) and
	# 7 from it (six suspends and its return); 2 to the second and 2 back.
	expect_eq "stack_across_leaf $mode (tracer correctness): switches to and from each" \
		'[[7,7],[2,2]]' "$(tp_switch_counts stack_across_leaf "$mode" "$pid")"
	expect_eq "stack_across_leaf $mode (tracer correctness): how each ended" \
		'["returned","abandoned"]' "$(tp_end_hows stack_across_leaf "$mode" "$pid")"
done
finish

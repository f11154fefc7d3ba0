# A Boost fiber's switches use no more of its stack traced than untraced (the tracer's part of a
# switch runs on the thread's walk stack), and fcontext switches made from SIGALRM handlers, some
# landing inside a traced switch, all come back. The trace has the measured fiber's suspends.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fcontext_stack_use --expect "exit 0" -- "$TP_BIN/fcontext_stack_use"
check "fcontext_stack_use: untraced, the handlers' round trips all came back" \
	grep -qx "handler round trips: at least 200, all came back: yes" \
	"$WORK/fcontext_stack_use.native.out"
for mode in "${TP_MODES[@]}"; do
	# Tracer correctness: the fiber's 100 suspends, and its deepest suspend stack walked from
	# the walk stack through the switch's stub into the fiber: 4 levels of recursion, then the
	# fiber's function.
	expect_eq "fcontext_stack_use $mode (tracer correctness): the fiber's suspends recorded" 100 \
		"$(tq fcontext_stack_use "$mode" '([.[] | select(.type == "coro" and
			.entry == "measured") | .coro]) as $fiber | [.[] | select(.type == "switch"
			and .from == $fiber[0])] | length')"
	expect_eq "fcontext_stack_use $mode (tracer correctness): the deepest suspend walked whole" \
		"suspend_at_depth x4, measured" \
		"$(tq fcontext_stack_use "$mode" '[.[] | select(.type == "stack") | [.frames[].sym] |
			select(index("measured") != null) | .[:index("measured") + 1]] |
			max_by(length) | "\(map(select(. == "suspend_at_depth")) | length |
			"suspend_at_depth x\(.)"), \(.[-1])"')"
done
finish

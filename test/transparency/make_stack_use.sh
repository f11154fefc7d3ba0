# How deep a coroutine's stack is written while it makes another coroutine (make_fcontext, as a
# Boost.Fiber that starts fibers; makecontext): the tracer's make hook runs on that stack, and
# every byte it adds is, over thousands of small stacks, resident memory (skynet's peak RSS per
# fiber), or an overflow near a small stack's end. Its budget: at most 384 bytes deeper than
# untraced (160 with Boost, 272 with ucontext here, whose variadic hook saves the argument
# registers; 512 and 544 when the make work ran on that stack, 640 with a helper the hooks
# once called out of line there, which made skynet 25 bytes a fiber bigger).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for api in fcontext ucontext; do
	name=make_stack_use_$api
	compare "$name" --expect "exit 0" -- "$TP_BIN/make_stack_use" "$api"
	check "$name: untraced, the child was made" \
		grep -qx "made a child from a coroutine ($api)" "$WORK/$name.native.out"
	untraced=$(cat "$WORK/$name.native.d/make_stack_use.txt")
	for mode in "${TP_MODES[@]}"; do
		traced=$(cat "$WORK/$name.$mode.d/make_stack_use.txt")
		check "$name $mode: bytes of the maker's stack written ($traced, untraced $untraced): at most 384 more" \
			test "$traced" -le "$((untraced + 384))"
		expect_eq "$name $mode (tracer correctness): the maker and its child" 2 \
			"$(tq "$name" "$mode" '[.[] | select(.type == "coro" and .kind != "thread")] | length')"
		# Walked from the hook's caller although the hook's work runs on the walk stack.
		expect_eq "$name $mode (tracer correctness): the child's creation stack names the maker" \
			true "$(tq "$name" "$mode" '(map(select(.type == "stack") |
				{key: (.id | tostring), value: [.frames[].sym]}) | from_entries) as $s
			| [.[] | select(.type == "coro" and .kind != "thread")][1].stack as $id
			| $s[$id | tostring] // [] | any(. == "maker_'"${api:0:1}"'")')"
	done
done
finish

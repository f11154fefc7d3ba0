# How deep a coroutine's stack is written while it makes another coroutine (make_fcontext, as a
# Boost.Fiber that starts fibers; makecontext): the tracer's make hook runs on that stack, and
# every byte it adds is, over thousands of small stacks, resident memory (skynet's peak RSS per
# fiber). Its budget: at most 576 bytes deeper than untraced (512 with Boost, 544 with ucontext
# here; a helper the hooks once called out of line made it 640 and skynet 25 bytes a fiber
# bigger).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for api in fcontext ucontext; do
	name=make_stack_use_$api
	compare "$name" --expect "exit 0" -- "$TP_BIN/make_stack_use" "$api"
	check "$name: untraced, the child was made" \
		grep -qx "made a child from a coroutine ($api)" "$WORK/$name.native.out"
	untraced=$(cat "$WORK/$name.native.d/make_stack_use.txt")
	for mode in "${TP_MODES[@]}"; do
		traced=$(cat "$WORK/$name.$mode.d/make_stack_use.txt")
		check "$name $mode: bytes of the maker's stack written ($traced, untraced $untraced): at most 576 more" \
			test "$traced" -le "$((untraced + 576))"
		expect_eq "$name $mode (tracer correctness): the maker and its child" 2 \
			"$(tq "$name" "$mode" '[.[] | select(.type == "coro" and .kind != "thread")] | length')"
	done
done
finish

# How much of a coroutine's stack the traced switches use, and switches from SIGALRM handlers
# (some landing inside a traced switch) that all come back, with Boost.Context's jump_fcontext
# and with glibc's swapcontext. The tracer's part of a switch runs on the thread's walk stack: a
# Boost switch writes no deeper into the coroutine's stack than untraced (Boost's own frame is
# deeper than the stub's); a swapcontext at most 8 bytes deeper (the stub's frame pointer: glibc
# writes nothing below the return address). The trace has the measured coroutine's suspends.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for api in fcontext ucontext; do
	name=switch_stack_use_$api
	compare "$name" --expect "exit 0" -- "$TP_BIN/switch_stack_use" "$api"
	check "$name: untraced, the handlers' round trips all came back" \
		grep -qx "handler round trips: at least 200, all came back: yes" \
		"$WORK/$name.native.out"
	untraced=$(cat "$WORK/$name.native.d/stack_use.txt")
	for mode in "${TP_MODES[@]}"; do
		traced=$(cat "$WORK/$name.$mode.d/stack_use.txt")
		if [[ $api == fcontext ]]; then
			expect_eq "$name $mode: bytes of the coroutine's stack written" "$untraced" \
				"$traced"
		else
			check "$name $mode: bytes of the coroutine's stack written ($traced, untraced $untraced): at most 8 more" \
				test "$traced" -ge "$untraced" -a "$traced" -le "$((untraced + 8))"
		fi
		# Tracer correctness: the measured coroutine (made first) suspended 101 times (once
		# when made), and its deepest suspend stack was walked from the walk stack through the
		# switch's stub into the coroutine: 4 levels of recursion, then its function.
		expect_eq "$name $mode (tracer correctness): the coroutine's suspends recorded" 101 \
			"$(tq "$name" "$mode" '([.[] | select(.type == "coro" and .kind != "thread")] |
				min_by(.ts) | .coro) as $c | [.[] | select(.type == "switch" and
				.from == $c)] | length')"
		expect_eq "$name $mode (tracer correctness): the deepest suspend walked whole" \
			"suspend_at_depth x4, measured" \
			"$(tq "$name" "$mode" '[.[] | select(.type == "stack") | [.frames[].sym] |
				select(index("measured") != null) | .[:index("measured") + 1]] |
				max_by(length) | "\(map(select(. == "suspend_at_depth")) | length |
				"suspend_at_depth x\(.)"), \(.[-1])"')"
	done
done
finish

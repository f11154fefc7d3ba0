# free() and munmap() of coroutine stacks (the preload hooks both to see coroutines end): the
# program runs as untraced, its first open after switching gets the same fd, and the trace
# ends the coroutines whose stacks were given back, not the one that still ran when a block
# next to its stack was freed.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_release --expect "exit 0" -- "$TP_BIN/stack_release"
check "stack_release: untraced, every step ran" \
	grep -qx "steps: 15" "$WORK/stack_release.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_release "$mode" stack_release)
	# Tracer correctness: five coroutines, each switched to four times (three resumes and
	# the start) and each ending exactly once; none ended while it still had switches to come.
	expect_eq "stack_release $mode (tracer correctness): five ucontext coroutines" 5 \
		"$(tq stack_release "$mode" "[.[] | select(.type == \"coro\" and .pid == ${pid:-0}
			and .kind == \"ucontext\")] | length")"
	expect_eq "stack_release $mode (tracer correctness): each resumed 4 times" \
		'[4,4,4,4,4]' \
		"$(tq stack_release "$mode" "([.[] | select(.type == \"coro\" and .pid == ${pid:-0}
			and .kind == \"ucontext\") | .coro]) as \$ids | [\$ids[] as \$c |
			[.[] | select(.type == \"switch\" and .to == \$c)] | length] | tojson")"
	expect_eq "stack_release $mode (tracer correctness): no switch after a coroutine's end" 0 \
		"$(tq stack_release "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l |
			[\$l[] | select(.type == \"coro_end\")] | map(. as \$e | [\$l[] |
			select(.type == \"switch\" and .to == \$e.coro and .ts > \$e.ts)] | length)
			| add // 0")"
done
finish

# Coroutines on 8 KiB stacks with a guard page, on three threads in two rounds, suspending about
# 5 KiB deep: the first suspend at each call site is unwound whole, on the thread's walk stack,
# not on the coroutine's (a walk needs 3 to 7 KB, more than is left there). The program runs as
# untraced, and the trace has those deep stacks.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare small_stacks --expect "exit 0" -- "$TP_BIN/small_stacks"
check "small_stacks: untraced, every thread summed its coroutines" \
	grep -qx "round 1 thread 2: 1302" "$WORK/small_stacks.native.out"
for mode in "${TP_MODES[@]}"; do
	# Tracer correctness: a stack walked from inside the recursion, 15 of its frames in it
	# (16 frames kept: the suspend helper, then the recursion).
	expect_eq "small_stacks $mode (tracer correctness): a deep suspend stack was walked" 15 \
		"$(tq small_stacks "$mode" '[.[] | select(.type == "stack") |
			[.frames[] | select(.sym == "descend")] | length] | max // 0')"
done
finish

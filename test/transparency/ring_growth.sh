# A thread that grows its event ring (100,000 ucontext round trips): the program runs as
# untraced, errno left alone by every switch; every switch is in the trace or counted lost.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare ring_growth --expect "exit 0" -- "$TP_BIN/ring_growth"
check "ring_growth: untraced, no switch changed errno" \
	grep -qx "100000 round trips, errno changed 0 times" "$WORK/ring_growth.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid ring_growth "$mode" ring_growth)
	# Tracer correctness: 200,000 switches between main and the coroutine (and the first
	# switch into it), recorded or counted in a loss line of the thread.
	expect_eq "ring_growth $mode (tracer correctness): every switch recorded or counted lost" \
		true \
		"$(tq ring_growth "$mode" "[.[] | select(.pid == ${pid:-0})] |
			([.[] | select(.type == \"switch\")] | length) +
			([.[] | select(.type == \"loss\") | .count] | add // 0) >= 200000")"
done
finish

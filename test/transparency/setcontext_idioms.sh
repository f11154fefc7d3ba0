# getcontext/setcontext: a loop on one stack counting to 5, and a round-robin scheduler of three
# makecontext coroutines that save with getcontext and jump with setcontext.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare setcontext_loop --expect "exit 0" -- "$TP_BIN/setcontext_idioms" loop
check "setcontext_loop: untraced, counts to 5" grep -qx "loop: n=5" "$WORK/setcontext_loop.native.out"
compare setcontext_scheduler --expect "exit 0" -- "$TP_BIN/setcontext_idioms" scheduler
check "setcontext_scheduler: untraced, the last step ran" \
	grep -qx "coroutine 2 step 4" "$WORK/setcontext_scheduler.native.out"
# Tracer correctness, not transparency: the three coroutines stay the same three coroutines
# through their setcontext switches, and the trace ends with each one suspended.
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid setcontext_scheduler "$mode" setcontext_idioms)
	expect_eq "setcontext_scheduler $mode (tracer correctness): ucontext coroutines made" 3 \
		"$(tq setcontext_scheduler "$mode" "[.[] | select(.type == \"coro\" and
			.pid == ${pid:-0} and .kind == \"ucontext\")] | length")"
	expect_eq "setcontext_scheduler $mode (tracer correctness): final states of them" \
		'["suspended","suspended","suspended"]' \
		"$(tq setcontext_scheduler "$mode" "[.[] | select(.type == \"coro\" and
			.pid == ${pid:-0} and .kind == \"ucontext\") | .coro] as \$ids |
			[.[] | select(.type == \"state\" and .pid == ${pid:-0} and
			(.coro as \$c | \$ids | index(\$c))) | .state] | tojson")"
done
finish

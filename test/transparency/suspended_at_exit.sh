# Coroutines still suspended at the end: the tracer unwinds their saved contexts then (their
# memory is gone afterwards), which must change nothing the program sees, even where a stack or a
# saved context was unmapped under a suspended coroutine; and the process's dumpable flag and
# TracerPid are as untraced (the tracer names the collector with PR_SET_PTRACER only under Yama
# scope 1, which touches neither). Ends by returning from main, by exit() in a coroutine, by
# _exit, by SIGKILL.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sae_return --expect "exit 0" -- "$TP_BIN/suspended_at_exit" return
compare sae_exit --expect "exit 7" -- "$TP_BIN/suspended_at_exit" exit
compare sae__exit --expect "exit 3" -- "$TP_BIN/suspended_at_exit" _exit
# Killed: nothing runs at the end; the whole stacks come from the collector, which read them
# from the live process while it slept (its tick converts the switches within a second or two).
compare sae_kill --expect "signal KILL" -- "$TP_BIN/suspended_at_exit" kill
check "suspended_at_exit: untraced, everything suspended" \
	grep -qx "three ucontext coroutines and a fiber suspended" "$WORK/sae_return.native.out"
check "suspended_at_exit: untraced, not dumpable-changed" \
	bash -c "[ \$(grep -c '^dumpable 1\$' '$WORK/sae_return.native.out') = 2 ]"
for name in sae_return sae_exit sae__exit sae_kill; do
	for mode in "${TP_MODES[@]}"; do
		pid=$(tp_app_pid "$name" "$mode" suspended_at_exit)
		# Tracer correctness: the coroutine parked with its stack intact ends with its whole
		# stack (park_deep < co_waiter), unwound at the end; the fiber's names fiber_parked.
		stacks="(map(select(.type == \"stack\") | {key: (.id | tostring),
			value: [.frames[].sym]}) | from_entries) as \$s"
		expect_eq "$name $mode (tracer correctness): co_waiter's final stack" \
			"park_deep co_waiter" \
			"$(tq "$name" "$mode" "$stacks | (.[] | select(.type == \"coro\" and .pid == ${pid:-0}
				and .entry == \"co_waiter\") | .coro) as \$c | .[] | select(.type == \"state\"
				and .coro == \$c) | \$s[.stack | tostring][0:2] | join(\" \")")"
		expect_eq "$name $mode (tracer correctness): the fiber's final stack" \
			"fiber_parked" \
			"$(tq "$name" "$mode" "$stacks | (.[] | select(.type == \"coro\" and .pid == ${pid:-0}
				and .kind == \"fcontext\") | .coro) as \$c | .[] | select(.type == \"state\"
				and .coro == \$c) | \$s[.stack | tostring][0]")"
	done
done
finish

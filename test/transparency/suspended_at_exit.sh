# Coroutines still suspended at the end: the tracer unwinds their saved contexts then (their
# memory is gone afterwards), which must change nothing the program sees, even where a stack or a
# saved context was unmapped under a suspended coroutine; and the process's dumpable flag and
# TracerPid are as untraced (the tracer names the collector with PR_SET_PTRACER only under Yama
# scope 1, which touches neither). Ends by returning from main, by exit() in a coroutine, by
# _exit, by SIGKILL. The time of its end, recorded by the process at exit or (killed) taken by the
# collector, goes into the exit line.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sae_return --expect "exit 0" -- "$TP_BIN/suspended_at_exit" return
compare sae_exit --expect "exit 7" -- "$TP_BIN/suspended_at_exit" exit
compare sae__exit --expect "exit 3" -- "$TP_BIN/suspended_at_exit" _exit
# Killed: nothing runs at the end; the whole stacks come from the collector, which read them
# from the live process while it waited: it kills itself once co_waiter's whole stack is in the
# trace, and 3 s or more after its last switch.
compare sae_kill --expect "signal KILL" --timeout 60 \
	--after-ready 'trace:"type":"stack".*"sym":"park_deep".*"sym":"co_waiter"' \
	-- "$TP_BIN/suspended_at_exit" kill
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
		# The exit line says when the process ended: after its last switch (the killed one
		# slept 3 s after it; nothing of its own recorded that end, the collector saw it).
		gap=$(tq "$name" "$mode" "([.[] | select(.type == \"exit\" and .pid == ${pid:-0})
			| .ts][0] // 0) - ([.[] | select(.type == \"switch\" and .pid == ${pid:-0}) | .ts]
			| max) | . / 1e9")
		least=0
		[ "$name" = sae_kill ] && least=3
		check "$name $mode (tracer correctness): the exit line's ts is ${least} s or more after the last switch ($gap s)" \
			awk -v g="$gap" -v l="$least" 'BEGIN {exit !(g != "" && g + 0 >= l)}'
	done
done
finish

# longjmp: as error handling within one stack (main's and a coroutine's), and as QEMU's coroutine
# switch (sigsetjmp + siglongjmp between stacks, after one swapcontext to start each).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare longjmp_errors --expect "exit 0" -- "$TP_BIN/longjmp_idioms" errors
check "longjmp_errors: untraced, both caught twice" \
	bash -c "grep -qx 'main stack: caught 2' '$WORK/longjmp_errors.native.out' &&
		grep -qx 'coroutine: caught 2' '$WORK/longjmp_errors.native.out'"
compare longjmp_qemu --expect "exit 0" -- "$TP_BIN/longjmp_idioms" qemu
jumps=$(sed -n 's/^jumps between coroutines: //p' "$WORK/longjmp_qemu.native.out")
check "longjmp_qemu: untraced, the coroutines jumped ($jumps)" [ "${jumps:-0}" -gt 0 ]
# Tracer correctness: the error-handling jumps are no switches; every QEMU-style jump is one, and
# each switch leaves the coroutine the previous one entered.
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid longjmp_errors "$mode" longjmp_idioms)
	expect_eq "longjmp_errors $mode (tracer correctness): no switch by a jump" 0 \
		"$(tq longjmp_errors "$mode" "[.[] | select(.type == \"switch\" and .pid == ${pid:-0}
			and .how == \"siglongjmp\")] | length")"
	pid=$(tp_app_pid longjmp_qemu "$mode" longjmp_idioms)
	expect_eq "longjmp_qemu $mode (tracer correctness): every jump is a switch" "${jumps:-?}" \
		"$(tq longjmp_qemu "$mode" "[.[] | select(.type == \"switch\" and .pid == ${pid:-0}
			and .how == \"siglongjmp\")] | length")"
	expect_eq "longjmp_qemu $mode (tracer correctness): each switch leaves what the last entered" 0 \
		"$(tq longjmp_qemu "$mode" "[.[] | select(.type == \"switch\" and .pid == ${pid:-0})]
			| reduce .[] as \$s ({prev: null, bad: 0}; {prev: \$s.to,
				bad: (.bad + (if .prev != null and .prev != \$s.from then 1 else 0 end))})
			| .bad")"
done
finish

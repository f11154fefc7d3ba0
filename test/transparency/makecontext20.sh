# makecontext with 20 arguments: the entry sees all 20, suspends once, and returns through uc_link.
# The trace shows the entry's suspend stack as the program's own: below entry20, glibc's
# __start_context (the return address makecontext set), not the tracer's trampoline.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare makecontext20 --expect "exit 0" -- "$TP_BIN/makecontext20"
check "makecontext20: untraced, the entry saw 1..20" \
	grep -qx "entry got: $(seq -s ' ' 1 20)" "$WORK/makecontext20.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid makecontext20 "$mode" makecontext20)
	expect_eq "makecontext20 $mode (tracer correctness): the entry's suspend stack ends as untraced" \
		"entry20 __start_context:0" \
		"$(tq makecontext20 "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l |
			(\$l[] | select(.type == \"coro\" and .entry == \"entry20\") | .coro) as \$c |
			([\$l[] | select(.type == \"switch\" and .from == \$c)][0].stack) as \$s |
			[\$l[] | select(.type == \"stack\") | .frames[] | select(.module // \"\" | test(\"libctp\"))]
			as \$tracer | (\$l[] | select(.type == \"stack\" and .id == \$s) | .frames) as \$f |
			\"\\(\$f[0].sym) \\(\$f[-1].sym):\\(\$tracer | length)\"")"
done
finish

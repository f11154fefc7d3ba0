# Coroutines made over the stack of a suspended one (a stack reused without its coroutine's end):
# A on 128 KiB; B on 14 KiB inside A's stack; C on 8 KiB right above B, sharing B's last page;
# B and C take turns on another thread. The program runs as untraced; in the trace A ends
# (abandoned) before B is made, and B and C each get every switch of theirs (101 to each, 101
# from each: 100 suspends and the return).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_made_over --expect "exit 0" -- "$TP_BIN/stack_made_over"
check "stack_made_over: untraced, A ran once, B and C their 100 rounds" \
	grep -qx "runs: A 1, B 100, C 100" "$WORK/stack_made_over.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_made_over "$mode" stack_made_over)
	coros="[.[] | select(.type == \"coro\" and .pid == ${pid:-0}
		and ((.entry // \"\") | test(\"^[abc]_body$\")))]"
	expect_eq "stack_made_over $mode (tracer correctness): A abandoned before B is made" \
		"a_body:abandoned:before" \
		"$(tq stack_made_over "$mode" ". as \$l | $coros | (.[] | select(.entry == \"a_body\")) as \$a
			| (.[] | select(.entry == \"b_body\")) as \$b
			| ([\$l | to_entries[] | select(.value.type == \"coro_end\" and .value.coro == \$a.coro)]
				| first) as \$ended
			| ([\$l | to_entries[] | select(.value.type == \"coro\" and .value.coro == \$b.coro)]
				| first) as \$made
			| \"a_body:\\(\$ended.value.how):\\(if \$ended.key < \$made.key then \"before\" else \"after\" end)\"")"
	expect_eq "stack_made_over $mode (tracer correctness): B's and C's switches are their own" \
		"b_body:101:101:returned c_body:101:101:returned" \
		"$(tq stack_made_over "$mode" ". as \$l | [$coros[] | select(.entry != \"a_body\")
			| .coro as \$c | [.entry,
				([\$l[] | select(.type == \"switch\" and .to == \$c)] | length),
				([\$l[] | select(.type == \"switch\" and .from == \$c)] | length),
				([\$l[] | select(.type == \"coro_end\" and .coro == \$c) | .how] | join(\"+\"))]
			| map(tostring) | join(\":\")] | sort | join(\" \")")"
done
finish

# free() of a block that begins near a page's end and holds, after a record, a suspended
# coroutine's stack that begins on the next page: the program runs as untraced, and the trace
# ends that coroutine (abandoned) at the free.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare free_across_page --expect "exit 0" -- "$TP_BIN/free_across_page"
check "free_across_page: untraced, the block was found and freed" \
	grep -qx "freed a block whose stack began on the next page" "$WORK/free_across_page.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid free_across_page "$mode" free_across_page)
	expect_eq "free_across_page $mode (tracer correctness): the coroutine ended at the free" \
		'["abandoned"]' \
		"$(tq free_across_page "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l |
			[\$l[] | select(.type == \"coro\" and .kind == \"ucontext\") | .coro] as \$c |
			[\$l[] | select(.type == \"coro_end\" and (.coro as \$x | \$c | index(\$x))) |
			.how] | tojson")"
done
finish

# free() of a block whose first pages are a guard and whose rest is a suspended coroutine's stack
# (SimGrid's layout: one guard page by default, more with contexts/guard-size), for a ucontext and
# a Boost.Context coroutine: the program runs as untraced (mprotect, hooked to know guards, keeps
# errno as the kernel left it), and the trace ends both coroutines (abandoned) at the free.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for pages in 1 3; do
	name=guard_page_stack_$pages
	compare "$name" --expect "exit 0" -- "$TP_BIN/guard_page_stack" "$pages"
	check "$name: untraced, both blocks were freed" \
		grep -qx "freed two guarded blocks with suspended coroutines" "$WORK/$name.native.out"
	check "$name: untraced, a failing mprotect says EINVAL" \
		grep -qx "a failing mprotect: -1, errno 22" "$WORK/$name.native.out"
	for mode in "${TP_MODES[@]}"; do
		pid=$(tp_app_pid "$name" "$mode" guard_page_stack)
		expect_eq "$name $mode (tracer correctness): both coroutines ended at the free" \
			'[["fcontext","abandoned"],["ucontext","abandoned"]]' \
			"$(tq "$name" "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l |
				[\$l[] | select(.type == \"coro\" and .kind != \"thread\")] as \$c |
				[\$c[] | . as \$k | [\$k.kind, ([\$l[] | select(.type == \"coro_end\" and
				.coro == \$k.coro) | .how] | first // \"none\")]] | sort | tojson")"
	done
done
finish

# free() of a block whose first page is a guard and whose rest is a suspended coroutine's stack
# (SimGrid's layout), for a ucontext and a Boost.Context coroutine: the program runs as
# untraced, and the trace ends both coroutines (abandoned) at the free.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare guard_page_stack --expect "exit 0" -- "$TP_BIN/guard_page_stack"
check "guard_page_stack: untraced, both blocks were freed" \
	grep -qx "freed two guarded blocks with suspended coroutines" \
	"$WORK/guard_page_stack.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid guard_page_stack "$mode" guard_page_stack)
	expect_eq "guard_page_stack $mode (tracer correctness): both coroutines ended at the free" \
		'[["fcontext","abandoned"],["ucontext","abandoned"]]' \
		"$(tq guard_page_stack "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l |
			[\$l[] | select(.type == \"coro\" and .kind != \"thread\")] as \$c |
			[\$c[] | . as \$k | [\$k.kind, ([\$l[] | select(.type == \"coro_end\" and
			.coro == \$k.coro) | .how] | first // \"none\")]] | sort | tojson")"
done
finish

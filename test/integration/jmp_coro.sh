# A QEMU-style runtime of our own (test/programs/jmp_coro_lost.c): coroutines started with
# makecontext and one swapcontext, then switched with sigsetjmp + siglongjmp, finished ones kept
# in a pool for reuse. Healthy: every switch the program counts is traced, the pooled
# coroutines end idle, and the report finds nothing. With one worker's fd closed behind its back
# (--lose-one), the report names that one cause: a lost wakeup on that fd, waiting in
# wait_readable (its whole stack, unwound from the frame the siglongjmp hook saved), closed in
# main.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

prog=$PROGRAMS/jmp_coro_lost
"$prog" >"$WORK/plain.out"
trace ok -- "$prog"
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the same output traced as untraced" "$(cat "$WORK/plain.out")" "$(cat "$WORK/ok.out")"
counted=$(sed -n 's/.* switches \([0-9]*\)$/\1/p' "$WORK/ok.out")
check "the program counted its switches ($counted)" [ -n "$counted" ]
expect_eq "every switch it counted is traced" "$counted" \
	"$(q ok '[.[] | select(.type == "switch")] | length')"
expect_eq "by siglongjmp, but each coroutine's start (a swapcontext)" \
	"$(q ok '[.[] | select(.type == "coro" and .kind == "ucontext")] | length')" \
	"$(q ok '[.[] | select(.type == "switch" and .how != "siglongjmp")] | length')"
report ok
expect_eq "--report: nothing to fail on (exit 0)" 0 "$report_status"
expect_eq "--report: no finding on the healthy run" 0 "$(rq ok '.findings | length')"
expect_eq "every coroutine ends idle in the pool" \
	"$(q ok '[.[] | select(.type == "coro" and .kind == "ucontext")] | length')" \
	"$(rq ok '.summary.idle')"
expect_eq "each suspended in the runtime's trampoline, its whole stack known" 0 \
	"$(q ok '(map(select(.type == "stack") | {key: (.id | tostring), value: .frames}) | from_entries) as $s
		| [.[] | select(.type == "state" and .state == "suspended")
			| select(($s[.stack | tostring] // []) | map(.sym) | index("trampoline") | not)]
		| length')"

"$prog" --lose-one >"$WORK/plain_lost.out"
trace lost -- "$prog" --lose-one
expect_eq "ctp-run exits as the program did" 0 "$status"
expect_eq "the same output traced as untraced" "$(cat "$WORK/plain_lost.out")" \
	"$(cat "$WORK/lost.out")"
fd=$(sed -n 's/^lost fd \([0-9]*\)$/\1/p' "$WORK/lost.out")
check "the program says which fd it stranded ($fd)" [ -n "$fd" ]
report lost
expect_eq "--report exits 3 on the lost wakeup" 3 "$report_status"
expect_eq "one finding: a lost wakeup on that fd, reading" "1 lost_wakeup $fd read" \
	"$(rq lost '"\(.findings | length) \(.findings[0].kind) \(.findings[0].fd) \(.findings[0].op)"')"
expect_eq "it waits in wait_readable, called by worker_main" "co_switch wait_readable worker_main" \
	"$(rq lost '.findings[0].stack[0:3] | map(sub(" .*"; "")) | join(" ")')"
check "it was closed in main" \
	[ "$(rq lost '.findings[0].close.stack | map(select(test("^main"))) | length')" -gt 0 ]
finish

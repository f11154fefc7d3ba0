# Five coroutines run once, suspend and are forgotten; three more finish. The report groups the
# forgotten ones as one leak created in spawn_forgotten and one stuck group, and exits 0. The same
# program ending by exit() from a coroutine of its own: that one ran at the end, and is no leak.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/report_lib.sh"

trace lk -- "$PROGRAMS/report_leak" 5 3
expect_eq "the program ran" 0 "$status"
report lk
expect_eq "--report exits 0 on leaks" 0 "$report_status"
expect_eq "one leak group of 5, created by spawn_forgotten, entry body" "1:5:body" \
	"$(rq lk '[.findings[] | select(.kind == "leak")] | "\(length):\(.[0].count):\(.[0].entry)"')"
check "its creation stack names spawn_forgotten" \
	[ "$(rq lk '.findings[] | select(.kind == "leak") | .stack | index("spawn_forgotten") != null')" == true ]
expect_eq "the leaked coroutines are the forgotten ones" \
	"$(q lk '[.[] | select(.type == "coro" and .entry == "body") | .coro] | sort | map(tostring) | join(",")')" \
	"$(rq lk '.findings[] | select(.kind == "leak") | .coros | sort | map(tostring) | join(",")')"
expect_eq "one stuck group of 5 waiting in wait_for_a_wakeup_that_never_comes" \
	"1:5:wait_for_a_wakeup_that_never_comes" \
	"$(rq lk '[.findings[] | select(.kind == "stuck")] | "\(length):\(.[0].count):\(.[0].stack[0])"')"
expect_eq "nothing else" 0 "$(rq lk '[.findings[] | select(.kind != "leak" and .kind != "stuck")] | length')"

trace lx -- "$PROGRAMS/report_leak" 5 3 exit
expect_eq "(exit) the program ran" 0:done "$status:$(cat "$WORK/lx.out")"
expect_eq "(exit) the coroutine that called exit runs at the end" running \
	"$(q lx '(.[] | select(.type == "coro" and .entry == "end_the_program") | .coro) as $c | .[] | select(.type == "state" and .coro == $c) | .state')"
report lx
expect_eq "(exit) --report exits 0 on leaks" 0 "$report_status"
expect_eq "(exit) the leak is the 5 forgotten ones alone" \
	"$(q lx '[.[] | select(.type == "coro" and .entry == "body") | .coro] | sort | map(tostring) | join(",")')" \
	"$(rq lx '[.findings[] | select(.kind == "leak") | .coros[]] | sort | map(tostring) | join(",")')"
expect_eq "(exit) findings: one leak, one stuck" "leak stuck" \
	"$(rq lx '[.findings[] | .kind] | sort | join(" ")')"
finish

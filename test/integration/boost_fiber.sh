# Boost.Fiber (libboost_fiber switches through ontop_fcontext, its function returning an empty
# fiber on every switch): producers, a squarer and a consumer over channels, all joined, and a
# detached fiber that waits forever on a condition variable. The finished fibers must be exited,
# the waiting one suspended in condition_variable::wait, every fiber with one id for its life.
source "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/boost_fiber_channels
"$prog" >"$WORK/plain.out"
trace fib -- "$prog"
expect_eq "ctp-run exits as the app did" 0 "$status"
expect_eq "the app computes the same with the tracer" "$(cat "$WORK/plain.out")" \
	"$(cat "$WORK/fib.out")"
expect_eq "and it is right" "sum of squares 338350" "$(cat "$WORK/fib.out")"

# The contexts: the main thread, the scheduler's dispatcher and five fibers.
expect_eq "one thread" 1 "$(q fib '[.[] | select(.type == "coro" and .kind == "thread")] | length')"
expect_eq "six fcontext coroutines" 6 \
	"$(q fib '[.[] | select(.type == "coro" and .kind == "fcontext")] | length')"
main=$(q fib '.[] | select(.type == "coro" and .kind == "thread") | .coro')
expect_eq "most switches are ontop switches" true \
	"$(q fib '[.[] | select(.type == "switch")] | (map(select(.how == "ontop_fcontext")) | length) > (length / 2)')"
expect_eq "every coroutine's switch count matches the switches to its id" 0 \
	"$(q fib '[.[] | select(.type == "switch") | .to] as $to | [.[] | select(.type == "state")
		| .coro as $c | select(.switches != ([$to[] | select(. == $c)] | length)
			+ (if .coro == '"$main"' then 1 else 0 end))] | length')"

# Which fiber is which, by the functions named in its suspend stacks.
fns='(reduce (.[] | select(.type == "stack")) as $s ({};
		.[$s.id | tostring] = [$s.frames[].sym // ""
			| capture("^(?<f>producer|squarer|consumer|wait_forever|boost::fibers::scheduler::dispatch)\\(").f]))
	as $syms | [.[] | select(.type == "switch" and .stack != null)
		| {coro: .from, f: $syms[.stack | tostring][]}] | group_by(.f)
	| map({key: .[0].f, value: (map(.coro) | unique)}) | from_entries'
expect_eq "fibers seen suspended" "boost::fibers::scheduler::dispatch,consumer,producer,squarer,wait_forever" \
	"$(q fib "$fns | keys | join(\",\")")"
expect_eq "two producers" 2 "$(q fib "$fns | .producer | length")"
expect_eq "the finished fibers exited" "exited,exited,exited,exited" \
	"$(q fib "($fns | .producer + .squarer + .consumer) as \$done
		| [.[] | select(.type == \"state\") | .coro as \$c | select(\$done | index(\$c))
		| .state] | join(\",\")")"
waiter=$(q fib "$fns | .wait_forever // [] | join(\",\")")
expect_eq "one waiting fiber ($waiter)" 1 "$(q fib "$fns | .wait_forever | length")"
expect_eq "the waiting fiber is suspended" suspended \
	"$(q fib ".[] | select(.type == \"state\" and .coro == $waiter) | .state")"
wstack=$(q fib ".[] | select(.type == \"state\" and .coro == $waiter) | .stack")
expect_eq "its stack goes through condition_variable::wait into wait_forever" \
	"boost::fibers::condition_variable::wait,wait_forever" \
	"$(q fib "[.[] | select(.type == \"stack\" and .id == $wstack) | .frames[].sym // \"\"
		| capture(\"^(void )?(?<f>boost::fibers::condition_variable::wait|wait_forever)[<(]\").f]
		| unique | join(\",\")")"
expect_eq "the dispatcher is suspended in dispatch" suspended \
	"$(q fib "($fns | .[\"boost::fibers::scheduler::dispatch\"][0]) as \$d
		| .[] | select(.type == \"state\" and .coro == \$d) | .state")"
expect_eq "the main thread is running" running \
	"$(q fib ".[] | select(.type == \"state\" and .coro == $main) | .state")"
expect_eq "nothing lost" 0 "$(q fib '[.[] | select(.type == "loss")] | length')"

# What a person reads: the report names the waiting fiber stuck, where it waits.
report_status=0
"$CTP_CAT" --report --json "$WORK/fib.jsonl.zst" >"$WORK/fib.report.json" || report_status=$?
expect_eq "ctp-cat --report finds nothing that fails (exit 0)" 0 "$report_status"
expect_eq "the report has the waiting fiber in a stuck group waiting in wait_forever" 1 \
	"$(jq --argjson w "$waiter" '[.findings[] | select(.kind == "stuck" and (.coros | index($w))
		and (.stack | any(startswith("wait_forever"))))] | length' "$WORK/fib.report.json")"
expect_eq "and no failure (crash, lost wakeup, missed readiness)" 0 \
	"$(jq '[.findings[] | select(.kind == "crash" or .kind == "lost_wakeup"
		or .kind == "missed_readiness")] | length' "$WORK/fib.report.json")"


# The text view: Boost's names are mostly template arguments, shortened as the report shortens
# them, and whole with --full-names.
text_status=0
"$CTP_CAT" --format=text "$WORK/fib.jsonl.zst" >"$WORK/fib.txt" || text_status=$?
expect_eq "ctp-cat --format=text exits 0" 0 "$text_status"
expect_eq "the waiter is named by its entry, shortened, in its switch lines" true \
	"$(grep -qF "void boost::context::detail::fiber_entry<...>(boost::context::detail::transfer_t)#$waiter -> " \
		"$WORK/fib.txt" && echo true)"
expect_eq "no template argument is left in the text view" 0 "$(grep -cE '<[A-Za-z_:]' "$WORK/fib.txt")"
full_status=0
"$CTP_CAT" --format=text --full-names "$WORK/fib.jsonl.zst" >"$WORK/fib-full.txt" || full_status=$?
expect_eq "--format=text --full-names: the arguments are back" "0:true" \
	"$full_status:$(grep -qF "fiber_entry<boost::context::detail::fiber_record<boost::context::fiber, " \
		"$WORK/fib-full.txt" && echo true)"
plain_status=0
"$CTP_CAT" --full-names "$WORK/fib.jsonl.zst" >/dev/null 2>"$WORK/full-plain.err" || plain_status=$?
expect_eq "--full-names without --report or --format=text: a usage error (2)" "2:true" \
	"$plain_status:$(grep -q -- '--full-names needs --report or --format=text' "$WORK/full-plain.err" && echo true)"

finish

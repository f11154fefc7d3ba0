# C++ exceptions in ucontext coroutines (deep throws, a throw after a suspend inside the try
# block, std::exception_ptr rethrown in main), thousands of times: the program must behave
# exactly as it does untraced, and the trace must have every switch.
source "$(dirname "$0")/lib.sh"

COROS=4
ITERATIONS=1000
untraced=0
"$PROGRAMS/cxx_exceptions" $COROS $ITERATIONS >"$WORK/plain.out" 2>"$WORK/plain.err" || untraced=$?
expect_eq "untraced, the program checks out" 0 "$untraced"
trace cx -- "$PROGRAMS/cxx_exceptions" $COROS $ITERATIONS
expect_eq "traced, the same exit status" "$untraced" "$status"
expect_eq "traced, the same output" "$(cat "$WORK/plain.out")" "$(cat "$WORK/cx.out")"
expect_eq "traced, no message from the program or the tracer's libraries" "" \
	"$(grep -v '^ctp: ' "$WORK/cx.err" || true)"

# Each coroutine: ITERATIONS+1 resumes, ITERATIONS yields, one return.
expect_eq "switch lines" $((COROS * (2 * ITERATIONS + 2))) \
	"$(q cx '[.[] | select(.type == "switch")] | length')"
expect_eq "nothing lost" 0 "$(q cx '[.[] | select(.type == "loss") | .count] | add // 0')"
expect_eq "how: returns and swapcontexts" "return:$COROS swapcontext:$((COROS * (2 * ITERATIONS + 1)))" \
	"$(q cx '[.[] | select(.type == "switch") | .how] | group_by(.)
		| map("\(.[0]):\(length)") | join(" ")')"
expect_eq "the coroutines, entry demangled" "$COROS (anonymous namespace)::entry(int)" \
	"$(q cx '[.[] | select(.type == "coro" and .kind == "ucontext") | .entry]
		| "\(length) \(unique | join(","))"')"
expect_eq "every coroutine exited, resumed ITERATIONS+1 times" "exited:$((ITERATIONS + 1))" \
	"$(q cx '[.[] | select(.type == "coro" and .kind == "ucontext") | .coro] as $u
		| [.[] | select(.type == "state" and (.coro as $c | $u | index([$c])))
		   | "\(.state):\(.switches)"] | unique | join(",")')"
expect_eq "exit status in the trace" 0 "$(q cx '.[] | select(.type == "exit") | .status')"

finish

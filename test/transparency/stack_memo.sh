# Coroutines made alike suspending at one place through two callers (stack_memo.c), by groups
# and then in turn: the tracer, which checks the stacks it remembered against each coroutine's
# stack, leaves every word of it and errno as they were; the program runs as untraced; and the
# first suspend of each coroutine names its own caller, in both halves (a place keeps a stack for
# each caller, and serves each only where memory holds it).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_memo --expect "exit 0" -- "$TP_BIN/stack_memo"
check "stack_memo: untraced, no word of the stacks and no errno changed" \
	grep -qx "400 coroutines, stack words changed 0, errno changed 0 times" \
	"$WORK/stack_memo.native.out"
# The caller each coroutine's first suspend should name, in the order they were made.
for i in $(seq 0 399); do
	if [ "$i" -lt 200 ]; then k=$(((i / 25) % 2)); else k=$((i % 2)); fi
	[ "$k" = 0 ] && echo first_caller || echo second_caller
done >"$WORK/stack_memo.expected"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_memo "$mode" stack_memo)
	tq stack_memo "$mode" "(map(select(.type == \"stack\") |
			{key: (.id | tostring), value: [.frames[].sym]}) | from_entries) as \$s
		| .[] as \$l | select(\$l.type == \"coro\" and \$l.pid == ${pid:-0} and
			\$l.kind == \"ucontext\") | \$l.coro as \$c
		| [.[] | select(.type == \"switch\" and .from == \$c)][0] | \$s[.stack | tostring]
		| if .[0] == \"suspend_here\" then .[1] else \"-\" end" >"$WORK/stack_memo.$mode.callers"
	wrong=$(paste -d' ' "$WORK/stack_memo.expected" "$WORK/stack_memo.$mode.callers" |
		awk '$1 != $2' | wc -l)
	expect_eq "stack_memo $mode (tracer correctness): first suspends seen" 400 \
		"$(wc -l <"$WORK/stack_memo.$mode.callers")"
	expect_eq "stack_memo $mode (tracer correctness): first suspends not naming their own caller" \
		0 "$wrong"
done
finish

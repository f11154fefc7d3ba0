# Coroutines made alike suspending at one place through two callers (stack_memo.c), by groups
# and then in turn, switched by glibc's ucontext and by Boost.Context's fcontext (whose hook
# checks the stacks it remembered on the switch itself): the tracer, which checks those stacks
# against each coroutine's stack, leaves every word of it and errno as they were; the program
# runs as untraced; and the first suspend of each coroutine names its own caller, in both halves
# (a place keeps a stack for each caller, and serves each only where memory holds it).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
# The caller each coroutine's first suspend should name, in the order they were made.
for i in $(seq 0 399); do
	if [ "$i" -lt 200 ]; then k=$(((i / 25) % 2)); else k=$((i % 2)); fi
	[ "$k" = 0 ] && echo first_caller || echo second_caller
done >"$WORK/stack_memo.expected"
for build in stack_memo:ucontext stack_memo_fcontext:fcontext; do
	name=${build%%:*} kind=${build#*:}
	compare "$name" --expect "exit 0" -- "$TP_BIN/$name"
	check "$name: untraced, no word of the stacks and no errno changed" \
		grep -qx "400 coroutines, stack words changed 0, errno changed 0 times" \
		"$WORK/$name.native.out"
	for mode in "${TP_MODES[@]}"; do
		pid=$(tp_app_pid "$name" "$mode" "$name")
		tq "$name" "$mode" "(map(select(.type == \"stack\") |
				{key: (.id | tostring), value: [.frames[].sym]}) | from_entries) as \$s
			| .[] as \$l | select(\$l.type == \"coro\" and \$l.pid == ${pid:-0} and
				\$l.kind == \"$kind\") | \$l.coro as \$c
			| [.[] | select(.type == \"switch\" and .from == \$c)][0] | \$s[.stack | tostring]
			| if .[0] == \"suspend_here\" then .[1] else \"-\" end" \
			>"$WORK/$name.$mode.callers"
		wrong=$(paste -d' ' "$WORK/stack_memo.expected" "$WORK/$name.$mode.callers" |
			awk '$1 != $2' | wc -l)
		expect_eq "$name $mode (tracer correctness): first suspends seen" 400 \
			"$(wc -l <"$WORK/$name.$mode.callers")"
		expect_eq "$name $mode (tracer correctness): first suspends not naming their own caller" \
			0 "$wrong"
	done
done
finish

# A program whose seccomp filter denies memfd_create once it started forks a child
# (fork_in_sandbox.c): the child's copy of the segment fails, and it runs as untraced, its
# coroutine switch and pipe as they are untraced; ctp says so on stderr. The parent goes on
# traced: its switches are in the trace, before the fork and after.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_in_sandbox --expect "exit 0" -- "$TP_BIN/fork_in_sandbox"
expect_eq "fork_in_sandbox: untraced, the child ran and the parent switched" \
	$'child: pipe 0, write 1\nchild: exit 3\nparent: switched' \
	"$(cat "$WORK/fork_in_sandbox.native.out")"
for mode in "${TP_MODES[@]}"; do
	check "fork_in_sandbox $mode: ctp says why the child runs untraced" \
		grep -qx "ctp: a fork child runs untraced: its copy of the segment failed: Operation not permitted" \
		"$WORK/fork_in_sandbox.$mode.err"
	# Tracer correctness: the parent alone, with its coroutine's four switches (in, out, in
	# again, and its return to main).
	expect_eq "fork_in_sandbox $mode (tracer correctness): one process, its coroutine's switches" \
		"1 4" "$(tq fork_in_sandbox "$mode" '([.[] | select(.type == "process")] | length)
			as $p | ([.[] | select(.type == "coro" and .kind == "ucontext")][0].coro) as $c
			| "\($p) \([.[] | select(.type == "switch" and (.from == $c or .to == $c))]
			| length)"')"
done
finish

# A fork while another thread T runs a coroutine (B, waiting in read) and has another suspended
# (A): the program runs as untraced. In the child's trace, B and T's own coroutine end with T
# (thread_exit, on T), as only the forking thread goes on; A stays alive, resumed by the child's
# main, and is left suspended there; nothing but the child's main runs at its end.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_leaves_threads --expect "exit 0" -- "$TP_BIN/fork_leaves_threads"
expect_eq "fork_leaves_threads: untraced, A lives on in both, B only in the parent" \
	"A resumed by the child's main
the child ends
the child exited with 0
B read 'x'
A resumed by the parent's main
the parent ends" "$(cat "$WORK/fork_leaves_threads.native.out")"
for mode in "${TP_MODES[@]}"; do
	parent=$(tp_app_pid fork_leaves_threads "$mode" fork_leaves_threads)
	child=$(tq fork_leaves_threads "$mode" \
		"[.[] | select(.type == \"process\" and .ppid == ${parent:-0})][0].pid // empty")
	check "fork_leaves_threads $mode: the parent and its child are in the trace" \
		test -n "$parent" -a -n "$child"
	# The child's coroutines, by entry function (its trace lists them as its segment holds them).
	expect_eq "fork_leaves_threads $mode (tracer correctness): in the child, how A and B ended" \
		'{"coroutine_a":"","coroutine_b":"thread_exit"}' "$(tq fork_leaves_threads "$mode" "
		[.[] | select(.type == \"coro_end\" and .pid == ${child:-0})] as \$e |
		[$(tp_ucontext_coros "${child:-0}")[] | .coro as \$c |
		 {(.entry): ([\$e[] | select(.coro == \$c) | .how] | join(\"+\"))}] | add |
		to_entries | sort_by(.key) | from_entries | tojson")"
	# T's own coroutine and B, each on T (the parent's thread that made them).
	expect_eq "fork_leaves_threads $mode (tracer correctness): in the child, both ended on T" \
		'[["thread","thread_exit",true],["ucontext","thread_exit",true]]' \
		"$(tq fork_leaves_threads "$mode" "
		([.[] | select(.type == \"coro\" and .pid == $parent and .kind == \"thread\" and
			.tid != $parent)][0].tid) as \$t |
		[.[] | select(.type == \"coro\" and .pid == ${child:-0})] as \$c |
		[.[] | select(.type == \"coro_end\" and .pid == ${child:-0}) | .coro as \$e |
		 [(\$c[] | select(.coro == \$e) | .kind), .how, .tid == \$t]] | sort | tojson")"
	expect_eq "fork_leaves_threads $mode (tracer correctness): the child resumed A once" \
		'[[1,1]]' "$(tq fork_leaves_threads "$mode" "
		[$(tp_ucontext_coros "${child:-0}")[] | select(.entry == \"coroutine_a\") | .coro]
		as [\$a] |
		[[([.[] | select(.type == \"switch\" and .pid == ${child:-0} and .to == \$a)] |
		  length),
		 ([.[] | select(.type == \"switch\" and .pid == ${child:-0} and .from == \$a)] |
		  length)]] | tojson")"
	expect_eq "fork_leaves_threads $mode (tracer correctness): the child's states at its end" \
		'[["running","thread"],["suspended","ucontext"]]' "$(tq fork_leaves_threads "$mode" "
		[.[] | select(.type == \"coro\" and .pid == ${child:-0})] as \$c |
		[.[] | select(.type == \"state\" and .pid == ${child:-0} and .state != \"exited\") |
		 .coro as \$s | [.state, (\$c[] | select(.coro == \$s) | .kind)]] | sort | tojson")"
done
finish

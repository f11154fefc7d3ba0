# The threads of small_thread_stacks.c under `ulimit -s 64`, set before ctp-run starts (or the
# program, in the plain form), so that the collector inherits it. The collector reads file and
# line with libdw, which needs more stack than that (before, ctp-collector died of SIGSEGV under
# `ulimit -s 128` and below, the trace lost), and now runs on a stack of its own. The
# coroutines' suspend stacks name their function, file and line.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_limit --stack-kb 64 --expect "exit 0" -- "$TP_BIN/small_thread_stacks"
expect_eq "stack_limit: untraced, every thread did its work" \
	"$(for i in 0 1 2 3 4 5 6 7; do echo "thread $i: done"; done)" \
	"$(cat "$WORK/stack_limit.native.out")"
for mode in "${TP_MODES[@]}"; do
	expect_eq "stack_limit $mode (tracer correctness): the suspended coroutines' function, file and line" \
		'[["thread_coro_body","small_thread_stacks.c",true]]' \
		"$(tq stack_limit "$mode" '[.[] | select(.type == "coro" and .kind == "ucontext")
			| .coro] as $coros | ([.[] | select(.type == "stack")
			| {key: (.id | tostring), value: .frames[0]}] | from_entries) as $frame
			| [.[] | select(.type == "state") | .coro as $c
			| select(any($coros[]; . == $c)) | $frame[.stack | tostring]
			| [.sym, (.file // "" | split("/") | last), .line != null]] | unique | tojson')"
done
finish

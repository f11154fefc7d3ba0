# Threads that switch coroutines under an address-space limit (ulimit -v 683 MiB), then a
# mapping of 448 MiB the program makes itself: traced as untraced, the mapping is made and the
# program exits 0. The tracer used to give each thread a 64 MiB malloc arena at its first stack
# walk (libunwind's thread-local cache), and the mapping failed traced. Under the limit the
# threads' stacks are left out and the preload says so once; their switches are all there.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare thread_walks_vm --as-kb 700000 --expect "exit 0" -- "$TP_BIN/thread_walks_vm"
expect_eq "thread_walks_vm: untraced, the mapping was made" "mapped 448 MiB" \
	"$(cat "$WORK/thread_walks_vm.native.out")"
for mode in "${TP_MODES[@]}"; do
	expect_eq "thread_walks_vm $mode (tracer correctness): switches of main and of 4 threads" \
		5 "$(tq thread_walks_vm "$mode" \
			'[.[] | select(.type == "switch") | .tid] | unique | length')"
	expect_eq "thread_walks_vm $mode (tracer correctness): the preload said once why threads have no stacks" \
		1 "$(grep -c '^ctp: suspend stacks are off in threads started under an address-space limit' \
			"$WORK/thread_walks_vm.$mode.err")"
	# The main thread's cache was there from the start: its stacks are walked still.
	check "thread_walks_vm $mode (tracer correctness): main's coroutine suspended with a walked stack" \
		[ "$(tq thread_walks_vm "$mode" '[.[] | select(.type == "stack" and (.frames | length) > 1)] | length')" -ge 1 ]
done
finish

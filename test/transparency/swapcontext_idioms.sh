# swapcontext idioms: two coroutines swapping straight to each other with errno kept across each
# swap; a coroutine swapping to a context main saved with getcontext; a swapcontext to the stack
# already running.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare swapcontext_peer --expect "exit 0" -- "$TP_BIN/swapcontext_idioms" peer
check "swapcontext_peer: untraced, every swap made and errno kept" \
	grep -qx "peer: swaps 1000 and 1000, errno lost 0 times" "$WORK/swapcontext_peer.native.out"
compare swapcontext_saved --expect "exit 0" -- "$TP_BIN/swapcontext_idioms" saved
check "swapcontext_saved: untraced, five visits" \
	grep -qx "saved: 5 visits" "$WORK/swapcontext_saved.native.out"
compare swapcontext_self --expect "exit 0" -- "$TP_BIN/swapcontext_idioms" self
check "swapcontext_self: untraced, counts to 5" \
	grep -qx "self: n=5" "$WORK/swapcontext_self.native.out"
# Tracer correctness, not transparency. Coroutines in the order made: the harness's own, then
# the two peers. Peer 0 is switched to once from main and 1000 times from peer 1, and switches
# away 1000 times to peer 1 and once more to main, when it returns through uc_link; peer 1 is
# switched to and away 1000 times (its last switch, to peer 0, leaves it suspended).
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid swapcontext_peer "$mode" swapcontext_idioms)
	expect_eq "swapcontext_peer $mode (tracer correctness): switches to and from each" \
		"[[1,1],[1001,1001],[1000,1000]]" "$(tp_switch_counts swapcontext_peer "$mode" "$pid")"
	pid=$(tp_app_pid swapcontext_saved "$mode" swapcontext_idioms)
	expect_eq "swapcontext_saved $mode (tracer correctness): the visitor's switches" \
		"[[1,1],[5,5]]" "$(tp_switch_counts swapcontext_saved "$mode" "$pid")"
	pid=$(tp_app_pid swapcontext_self "$mode" swapcontext_idioms)
	expect_eq "swapcontext_self $mode (tracer correctness): no switch but the harness's own" \
		"[[1,1]]" "$(tp_switch_counts swapcontext_self "$mode" "$pid")"
done
finish

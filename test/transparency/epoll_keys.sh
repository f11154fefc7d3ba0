# epoll sets whose keys are pointers of the program's own (epoll_keys.c): 60 coroutines wait on
# pipes registered in 40 sets, 2,400 keys; each round one set reports the pipes ready and the
# program resumes the coroutines its keys point to. The program runs as untraced, and the trace
# names the waiter of every readiness reported, in every round: the keys of the preload's small
# table and of its large one alike.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare epoll_keys --expect "exit 0" -- "$TP_BIN/epoll_keys"
check "epoll_keys: untraced, every round found every pipe ready" \
	grep -qx "40 rounds, 2400 keys, 2400 ready, 2400 reads" "$WORK/epoll_keys.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid epoll_keys "$mode" epoll_keys)
	expect_eq "epoll_keys $mode (tracer correctness): 60 coroutines waiting on a pipe each" 60 \
		"$(tq epoll_keys "$mode" "[.[] | select(.type == \"fd\" and .pid == ${pid:-0} and
			.event == \"would_block\") | [.coro, .fd]] | unique | length")"
	expect_eq "epoll_keys $mode (tracer correctness): readiness naming its waiter, the fd it waits on" \
		2400 "$(tq epoll_keys "$mode" "([.[] | select(.type == \"fd\" and .pid == ${pid:-0} and
			.event == \"would_block\") | {key: (.coro | tostring), value: .fd}] | from_entries)
			as \$fd_of | [.[] | select(.type == \"fd\" and .pid == ${pid:-0} and
			.event == \"ready\" and .waiter != null and
			\$fd_of[.waiter | tostring] == .fd)] | length")"
done
finish

# Closes of fds taken out of an epoll set first, as Asio closes every socket
# (close_after_unregister.c): the program runs as untraced, and the trace has one close for each
# fd epoll ever named (taken out then closed, taken out then dup2'd over, closed while still in
# the set) and none for the fd no readiness API named.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare close_after_unregister --expect "exit 0" -- "$TP_BIN/close_after_unregister"
out="$WORK/close_after_unregister.native.out"
check "close_after_unregister: untraced, the second close fails with EBADF" \
	grep -qx "closed again: close -1 errno EBADF" "$out"
# fd_of LABEL: the fd number the program printed for LABEL.
fd_of() { sed -n "s/^$1: fd \([0-9]*\),.*/\1/p" "$out"; }
named="[$(fd_of "taken out, then closed"),$(fd_of "taken out, then dup2 onto it"),"
named+="$(fd_of "closed while registered")]"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid close_after_unregister "$mode" close_after_unregister)
	expect_eq "close_after_unregister $mode (tracer correctness): a close per fd epoll named, no other" \
		"$named" \
		"$(tq close_after_unregister "$mode" "[.[] | select(.type == \"fd\" and
			.pid == ${pid:-0} and .event == \"close\") | .fd] | tojson")"
done
finish

# errno: makecontext, swapcontext and succeeding hooked I/O calls leave a sentinel errno alone;
# a failing read on fd -1 leaves exactly EBADF; reads that would block in a coroutine leave
# EAGAIN each time.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare errno_kept --expect "exit 0" -- "$TP_BIN/errno_kept"
check "errno_kept: untraced, read on fd -1 leaves EBADF" \
	grep -q "read on fd -1 .*errno 9 " "$WORK/errno_kept.native.out"
check "errno_kept: untraced, each would-block read leaves EAGAIN" \
	[ "$(grep -c "read would block .*errno $(python3 -c 'import errno; print(errno.EAGAIN)') *$" \
		"$WORK/errno_kept.native.out")" -eq 3 ]
finish

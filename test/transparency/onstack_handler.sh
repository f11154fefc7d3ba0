# A program's SA_ONSTACK handler, in a thread with no signal stack of its own, uses 512 KiB of
# stack, in main and in a new thread: untraced it runs on the thread's stack; traced on the
# preload's stand-in signal stack, which must be as large (at 64 KiB it crashed the program).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare onstack_handler --expect "exit 0" -- "$TP_BIN/onstack_handler"
expect_eq "onstack_handler: untraced, the handler ran in both threads" \
	"main: a handler used 512 KiB of stack
new thread: a handler used 512 KiB of stack" "$(cat "$WORK/onstack_handler.native.out")"
finish

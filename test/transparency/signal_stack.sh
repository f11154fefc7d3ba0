# The signal stack a program reads back and sets (sigaltstack), in main and in a new thread:
# traced, none where untraced there is none (the preload's own is out of its sight), so that
# the program sets its own as untraced, and a coroutine made by the signal-stack trick (QEMU's
# sigaltstack backend) puts back none; its SIGSEGV handler for a coroutine's overflow runs on
# the program's own and _exit(3)s.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare signal_stack --expect "exit 3" -- "$TP_BIN/signal_stack"
expect_eq "signal_stack: untraced, no signal stack until the program sets its own" \
	"main, at its start: signal stack none, size 0
main, after its first coroutine: signal stack none, size 0
new thread: signal stack none, size 0
new thread, after setting its own: signal stack the program's own, size 65536
new thread, after disabling it: signal stack none, size 0
signal-stack coroutine: the signal stack before it: none
signal-stack coroutine: run 0
signal-stack coroutine: run 1
signal-stack coroutine: run 2
signal-stack coroutine, at its end: signal stack none, size 0
main, after setting its own: signal stack the program's own, size 65536
overflow caught on the program's own signal stack" \
	"$(cat "$WORK/signal_stack.native.out")"
finish

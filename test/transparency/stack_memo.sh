# Coroutines made alike suspending at one place through two callers (stack_memo.c): the tracer,
# which checks the stacks it remembered against each coroutine's stack, leaves every word of it
# and errno as they were; the program runs as untraced.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_memo --expect "exit 0" -- "$TP_BIN/stack_memo"
check "stack_memo: untraced, no word of the stacks and no errno changed" \
	grep -qx "200 coroutines, stack words changed 0, errno changed 0 times" \
	"$WORK/stack_memo.native.out"
finish

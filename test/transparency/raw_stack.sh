# A coroutine on an 8 KiB mmap'ed stack (guard page below) made without makecontext, recursing
# through about 5 KiB and switching with swapcontext: the tracer must not unwind or write past it.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare raw_stack --expect "exit 0" -- "$TP_BIN/raw_stack"
finish

# Signals 1f: the program's own SIGSEGV handler, installed before or after its first coroutine,
# prints and _exit(42)s, traced or not.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare segv_handler_before --expect "exit 42" -- "$TP_BIN/sig_segv" handler-before
compare segv_handler_after --expect "exit 42" -- "$TP_BIN/sig_segv" handler-after
finish

# fork while two threads make and switch coroutines: every child ends (exit 0); a wedged child
# makes the program exit 99 after 20 s.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare fork_under_load --expect "exit 0" --timeout 30 -- "$TP_BIN/fork_load"
finish

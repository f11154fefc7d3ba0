# Signals 1c: int3 with no debugger dies of SIGTRAP.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sigtrap --expect "signal TRAP" -- "$TP_BIN/sig_trap"
finish

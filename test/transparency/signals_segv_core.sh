# Signals 1e: SIGSEGV with the default action dies of SIGSEGV and dumps a core
# (ulimit -c unlimited; the core-dumped bit is compared, not the file).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare segv_core --expect "signal SEGV core" --core -- "$TP_BIN/sig_segv" default
finish

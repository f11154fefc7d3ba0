# Signals 1d: seccomp's SECCOMP_RET_TRAP on getppid dies of SIGSYS.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sigsys --expect "signal SYS" -- "$TP_BIN/sig_sys"
finish

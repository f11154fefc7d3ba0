# Signals 1k: started with SIGCHLD ignored (the runner sets it before the exec, for the three
# ways alike: under ctp-run it is ctp-run that starts so). The program sees it ignored and its
# child reaped by the kernel, as untraced; ctp-run ends when the program ends (it hung, waiting
# for children the kernel reaped).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sigchld_ignored --expect "exit 0" --sigchld-ignored -- "$TP_BIN/sigchld_ignored"
check "sigchld_ignored untraced: the program started with SIGCHLD ignored" \
	grep -qx "SIGCHLD ignored: yes" "$WORK/sigchld_ignored.native.out"
check "sigchld_ignored untraced: its child was reaped by the kernel" \
	grep -qx "waitpid: no child (ECHILD)" "$WORK/sigchld_ignored.native.out"
finish

# Signals 1j: job control. A ^Z on the terminal to a program that catches SIGTSTP and goes on:
# untraced nothing stops, and the program ends by itself. Under ctp-run, which is in the
# terminal's foreground group too, ctp-run must not stop by the ^Z of its own accord (its shell
# would take the terminal back and leave the program running in the background): it stops only
# when the program does.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare tstp_caught --expect "exit 0" --job-control --after-ready susp -- "$TP_BIN/sig_tstp_caught"
expect_eq "tstp_caught untraced: nothing stopped" "" "$(cat "$WORK/tstp_caught.native.stops")"
check "tstp_caught untraced: the program got the ^Z" \
	grep -qx "got SIGTSTP, going on" "$WORK/tstp_caught.native.out"
finish

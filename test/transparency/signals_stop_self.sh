# Signals 1i: job control. A program stops itself with SIGSTOP and then SIGTSTP, and is
# continued by a SIGCONT to it alone (kill -CONT PID); then a ^Z on its terminal stops its whole
# process group and fg continues it; then SIGTERM ends it. Its parent (a shell, here the runner) must see each
# stop as untraced: under ctp-run, ctp-run stops with the program (else a shell would wait on,
# with the program stopped for good) and passes a SIGCONT it gets alone on to the program; at
# the ^Z it stops once, with the program, not a second time once fg continued both.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stop_self --expect "signal TERM" --job-control --after-ready susp -- \
	"$TP_BIN/sig_stop_self"
expect_eq "stop_self untraced: stopped as the case needs" \
	"stopped STOP,stopped TSTP,stopped TSTP," "$(tr '\n' , <"$WORK/stop_self.native.stops")"
finish

# Signals 1a: Ctrl-C on a real terminal. The program (and, in the ctp-run way, ctp-run with it)
# is the terminal's foreground job; ^C goes to the whole group. Untraced it dies of SIGINT.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare ctrl_c --expect "signal INT" --pty --after-ready intr -- "$TP_BIN/sig_wait"
finish

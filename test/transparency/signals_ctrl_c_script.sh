# Signals 1h: Ctrl-C to a shell script that runs the program in the foreground, then one more
# command. Untraced, the program dies of SIGINT and so does the script (bash ends when its
# foreground child died of the SIGINT it got too). With `ctp-run PROGRAM` in the script, ctp-run
# must die of SIGINT as well: had it exited 130, the script would take the Ctrl-C as handled by
# the child and run on. (The harness's ctp-run way runs the script itself under ctp-run, which
# tests the other side; here ctp-run is inside, as users put it in their scripts.)
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
script='"$@"; echo "the script ran on"'
tp_run_one script native 0 --pty --after-ready intr -- \
	bash -c "$script" script "$TP_BIN/sig_wait"
tp_run_one script in-script 0 --pty --after-ready intr -- \
	bash -c "$script" script "$CTP_RUN" -o "$WORK/script.jsonl.zst" -- "$TP_BIN/sig_wait"
expect_eq "script untraced: the script dies of SIGINT" "signal INT" \
	"$(head -n 1 "$WORK/script.native.status")"
expect_eq "script with ctp-run inside: the script dies of SIGINT too" "signal INT" \
	"$(head -n 1 "$WORK/script.in-script.status")"
same_file "script with ctp-run inside: stdout" "$WORK/script.native.out" "$WORK/script.in-script.out"
expect_eq "script with ctp-run inside: no process left behind" "leftover 0" \
	"$(sed -n 2p "$WORK/script.in-script.status")"
tp_trace_readable "script with ctp-run inside" "$WORK/script.jsonl.zst" "$WORK/script.in-script.jsonl"
expect_eq "script with ctp-run inside: the trace says the app died of SIGINT" 2 \
	"$(jq -s '[.[] | select(.type == "exit")][0].signal' "$WORK/script.in-script.jsonl")"
finish

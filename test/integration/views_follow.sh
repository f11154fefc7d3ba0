# ctp-cat --follow on a trace still being written: started before the trace file exists, it
# shows switches while the traced program still runs, ends by itself when the tracing run ends
# (the collector closes the file), and has then printed exactly what reading the finished
# trace prints.
source "$(dirname "$0")/lib.sh"

T=$WORK/follow.jsonl.zst
"$CTP_CAT" --follow --format=text "$T" >"$WORK/follow.txt" 2>"$WORK/follow.err" &
cat_pid=$!
# The program ticks every 100 ms until its standard input (a fifo the test holds open) ends.
mkfifo "$WORK/ticker.hold"
"$CTP_RUN" -o "$T" -- "$PROGRAMS/views_ticker" 0 100 <"$WORK/ticker.hold" >"$WORK/run.out" \
	2>"$WORK/run.err" &
run_pid=$!
exec 8>"$WORK/ticker.hold"

# While the program runs, switches show up (the collector closes a frame at least once a
# second); then the test lets it end.
shown() { grep -q ' switch ' "$WORK/follow.txt" 2>/dev/null; }
check "switches shown while the traced program runs" wait_until 60 shown
check "and the program was still running then" kill -0 "$run_pid"
exec 8>&-

wait "$run_pid"
expect_eq "ctp-run exits as the app did" 0 $?
# ctp-cat must end by itself once the trace's writer is done: give it 10 s.
ended=no
for _ in $(seq 1 100); do
	if ! kill -0 "$cat_pid" 2>/dev/null; then
		ended=yes
		break
	fi
	sleep 0.1
done
expect_eq "--follow ends when the tracing run ends" yes "$ended"
if [ "$ended" = no ]; then
	kill "$cat_pid"
fi
cat_status=0
wait "$cat_pid" || cat_status=$?
expect_eq "--follow exits 0 on a whole trace" 0 "$cat_status"

"$CTP_CAT" --format=text "$T" >"$WORK/whole.txt"
check "--follow printed exactly what the finished trace holds" cmp "$WORK/follow.txt" "$WORK/whole.txt"
expect_eq "every switch of the program" "$(sed -n 's/^switches //p' "$WORK/run.out")" \
	"$(grep -c ' switch ' "$WORK/whole.txt")"

# SIGINT ends following at once, and the Chrome output is still a whole JSON document.
"$CTP_CAT" --follow --format=chrome "$WORK/never.jsonl.zst" >"$WORK/int.json" 2>/dev/null &
int_pid=$!
# A background job starts with SIGINT ignored: a SIGINT before ctp-cat's handler is in place
# would be lost.
catches_sigint() {
	local mask
	mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
	[ -n "$mask" ] && (((0x$mask & 2) != 0))
}
check "ctp-cat --follow catches SIGINT" wait_until 30 catches_sigint "$int_pid"
kill -INT "$int_pid"
int_status=0
wait "$int_pid" || int_status=$?
check "SIGINT while waiting for the file ends --follow" test "$int_status" -le 2
"$CTP_CAT" --follow --format=chrome "$T" >"$WORK/done.json"
check "--follow on a finished trace ends at once with valid Chrome JSON" \
	python3 "$CTP_SOURCE_DIR/test/cat/views_chrome_check.py" "$WORK/done.json"

finish

# The plain form when its collector cannot trace: none to run (CTP_COLLECTOR=/bin/false), one
# that refuses the output (a symbolic link), and one that starts only after the program stopped
# waiting for it (2 s). Each time the program runs untraced, as it does untraced (status, stdout,
# stderr but for the tracer's own lines), the user is told, no process is left behind, and
# neither is the run directory the preload made for the collector's socket.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
cat >"$WORK/late-collector" <<LATE
#!/bin/sh
sleep 4
exec "$CTP_BUILD_DIR/collector/ctp-collector" "\$@"
LATE
chmod +x "$WORK/late-collector"
ln -s "$WORK/elsewhere.jsonl.zst" "$WORK/link.jsonl.zst"

# way_tmp NAME: the TMPDIR of one way, where the preload makes its run directory (with
# XDG_RUNTIME_DIR unset): its own, so that anything left there is that way's.
way_tmp() {
	mkdir -p "$WORK/tmp.$1"
	echo "$WORK/tmp.$1"
}
tp_run_one fails native 0 --unset XDG_RUNTIME_DIR --env "TMPDIR=$(way_tmp native)" -- \
	"$TP_BIN/errno_kept"
grep -v '^ctp' "$WORK/fails.native.err" >"$WORK/fails.native.err.app" || true
expect_eq "fails: untraced, the program ends as the case needs" "exit 0" \
	"$(head -n 1 "$WORK/fails.native.status")"
for how in none:/bin/false refused:link late:"$WORK/late-collector"; do
	mode=${how%%:*}
	arg=${how#*:}
	opts=(--unset XDG_RUNTIME_DIR --env "TMPDIR=$(way_tmp "$mode")" --env "LD_PRELOAD=$TP_PRELOAD")
	case $mode in
	refused) opts+=(--env "CTP_OUTPUT=$WORK/link.jsonl.zst") ;;
	*) opts+=(--env "CTP_COLLECTOR=$arg" --env "CTP_OUTPUT=$WORK/$mode.jsonl.zst") ;;
	esac
	tp_run_one fails "$mode" 0 "${opts[@]}" -- "$TP_BIN/errno_kept"
	grep -v '^ctp' "$WORK/fails.$mode.err" >"$WORK/fails.$mode.err.app" || true
	expect_eq "fails $mode: ends as untraced" "exit 0" "$(head -n 1 "$WORK/fails.$mode.status")"
	same_file "fails $mode: stdout" "$WORK/fails.native.out" "$WORK/fails.$mode.out"
	same_file "fails $mode: stderr (without the tracer's lines)" "$WORK/fails.native.err.app" \
		"$WORK/fails.$mode.err.app"
	check "fails $mode: the user is told it ran untraced" \
		grep -q "^ctp: the collector did not start (.*): running untraced" "$WORK/fails.$mode.err"
	expect_eq "fails $mode: no process left behind" "leftover 0" \
		"$(sed -n 2p "$WORK/fails.$mode.status")"
	expect_eq "fails $mode: no run directory left behind" "" "$(ls "$WORK/tmp.$mode")"
done
check "fails refused: the collector said why" \
	grep -q "is a symbolic link; refusing to write a trace through it" "$WORK/fails.refused.err"
check "fails refused: and wrote nothing through the link" [ ! -e "$WORK/elsewhere.jsonl.zst" ]
finish

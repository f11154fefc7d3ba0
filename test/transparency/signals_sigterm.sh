# Signals 1g: SIGTERM from outside (the harness; for ctp-run, to ctp-run, which forwards it) to a
# waiting program: it dies of SIGTERM. The trace must not make a crash of it: its exit line
# carries no fault address, and --report neither prints CRASH nor exits 3.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sigterm --expect "signal TERM" --after-ready kill:TERM -- "$TP_BIN/sig_wait"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid sigterm "$mode" sig_wait)
	check "sigterm $mode: the trace has the app's process" [ -n "$pid" ]
	# ctp-run waits for the app and knows the signal. The plain form's collector is no parent
	# of the app's, and the preload has no handler for SIGTERM (it must not have one): it can
	# only say that the app ended, not how.
	want='{"signal":15,"addr":null}'
	[ "$mode" = plain ] && want='{"signal":null,"addr":null}'
	expect_eq "sigterm $mode: its exit line says $want: no fault address" "$want" \
		"$(tq sigterm "$mode" "[.[] | select(.type == \"exit\" and .pid == ${pid:-0})][0] |
			{signal, addr} | tojson")"
	trace=$WORK/sigterm.jsonl.zst
	[ "$mode" = plain ] && trace=$WORK/sigterm-plain.jsonl.zst
	rc=0
	"$CTP_CAT" --report "$trace" >"$WORK/sigterm.$mode.report" 2>&1 || rc=$?
	check "sigterm $mode: --report does not exit 3 (got $rc)" [ "$rc" -ne 3 ]
	check "sigterm $mode: --report prints no CRASH" \
		bash -c "! grep -q CRASH '$WORK/sigterm.$mode.report'"
done
finish

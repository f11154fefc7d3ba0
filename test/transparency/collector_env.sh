# The plain form's collector gets the program's environment less LD_PRELOAD (so that its own
# settings reach it, as under ctp-run), trimmed in its own process: the program sees its
# environment whole, in order, before and after a coroutine ran, and keeps LD_PRELOAD for its
# children. Variables of the program's own go with it. Tracer settings it cannot take are named
# on stderr, each with its value and what it takes, and left at their defaults.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare collector_env --expect "exit 0" --env CTP_TEST_SETTING=kept --env TMPDIR=/tmp -- \
	"$TP_BIN/collector_env"
check "collector_env: untraced, the program's own variable is there" \
	grep -qx "after a coroutine: CTP_TEST_SETTING=kept" "$WORK/collector_env.native.out"
expect_eq "collector_env: the plain form's program keeps LD_PRELOAD" "$TP_PRELOAD" \
	"$(cat "$WORK/collector_env.plain.d/ld_preload.txt")"

compare bad_settings --expect "exit 0" --env CTP_STACK_DEPTH=deep --env CTP_STACKS=often -- \
	"$TP_BIN/collector_env"
for mode in "${TP_MODES[@]}"; do
	check "bad_settings $mode: the bad depth is named, with what it takes" \
		grep -qx "ctp: ignoring CTP_STACK_DEPTH=deep: not a number from 0 to 64" \
		"$WORK/bad_settings.$mode.err"
	check "bad_settings $mode: the bad mode is named, with what it takes" \
		grep -qx "ctp: ignoring CTP_STACKS=often: not every-switch or lasting" \
		"$WORK/bad_settings.$mode.err"
	expect_eq "bad_settings $mode: the trace has the default depth" 16 \
		"$(tq bad_settings "$mode" '[.[] | select(.type == "process")][0].stack_depth')"
done
finish

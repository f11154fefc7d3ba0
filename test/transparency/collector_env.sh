# The plain form's collector gets the program's environment less LD_PRELOAD (so that its own
# settings reach it, as under ctp-run), trimmed in its own process: the program sees its
# environment whole, in order, before and after a coroutine ran, and keeps LD_PRELOAD for its
# children. Variables of the program's own go with it.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare collector_env --expect "exit 0" --env CTP_TEST_SETTING=kept --env TMPDIR=/tmp -- \
	"$TP_BIN/collector_env"
check "collector_env: untraced, the program's own variable is there" \
	grep -qx "after a coroutine: CTP_TEST_SETTING=kept" "$WORK/collector_env.native.out"
expect_eq "collector_env: the plain form's program keeps LD_PRELOAD" "$TP_PRELOAD" \
	"$(cat "$WORK/collector_env.plain.d/ld_preload.txt")"
finish

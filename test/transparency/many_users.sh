# Workers that change at once, each to a user of its own, then run a program through system()
# (many_users.c): every such program is in the trace, each with its switch, and none says it
# could not reach the collector. The grants for the new users must not undo one another.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare many_users --expect "exit 0" --env XDG_RUNTIME_DIR= --env TMPDIR= -- "$TP_BIN/many_users"
expect_eq "many_users: untraced, every worker ran its shell's program" \
	"24 of 24 workers ran their shell's program" "$(cat "$WORK/many_users.native.out")"
for mode in "${TP_MODES[@]}"; do
	expect_eq "many_users $mode (tracer correctness): each shell's program in the trace, with its switches" \
		"24" \
		"$(tq many_users "$mode" '[.[] | select(.type == "process" and .argv[1] == "child")
			| .pid] as $children | [.[] | select(.type == "switch" and
			(.pid as $p | $children | index([$p])))] | group_by(.pid)
			| map(select(length >= 2)) | length')"
	check "many_users $mode: nothing said it could not reach the collector" \
		bash -c '! grep -q "cannot reach the collector" "$1"' sh "$WORK/many_users.$mode.err"
done
finish

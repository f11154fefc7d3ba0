# Coroutine stacks whose bases share one set of the preload's table of stack bases, freed while
# their coroutines are suspended: the program runs as untraced, and every one of them is seen
# ended (abandoned at the free), not left suspended at the end.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_bases_one_set --expect "exit 0" -- "$TP_BIN/stack_bases_one_set"
check "stack_bases_one_set: untraced, three coroutines started" \
	grep -qx "3 coroutines started on stacks sharing one set, their stacks freed" \
	"$WORK/stack_bases_one_set.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_bases_one_set "$mode" stack_bases_one_set)
	# Tracer correctness: the harness's own coroutine stays suspended (its stack is static);
	# the three on freed stacks end there.
	expect_eq "stack_bases_one_set $mode (tracer correctness): how each coroutine ended" \
		'["","abandoned","abandoned","abandoned"]' \
		"$(tp_end_hows stack_bases_one_set "$mode" "$pid")"
done
finish

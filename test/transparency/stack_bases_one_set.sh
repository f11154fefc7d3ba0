# Coroutine stacks whose bases share one set of the preload's table of stack bases: four
# coroutines there return, then four more are made there and their stacks freed while they are
# suspended. The program runs as untraced, and every one of the four is seen ended (abandoned at
# the free), not left suspended at the end: the bases of coroutines that returned take no place.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare stack_bases_one_set --expect "exit 0" -- "$TP_BIN/stack_bases_one_set"
check "stack_bases_one_set: untraced, four coroutines returned and four suspended" \
	grep -qx "4 coroutines returned, 4 suspended on stacks sharing one set, their stacks freed" \
	"$WORK/stack_bases_one_set.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid stack_bases_one_set "$mode" stack_bases_one_set)
	# Tracer correctness: the harness's own coroutine stays suspended (its stack is static);
	# four return; the four suspended on freed stacks end there.
	expect_eq "stack_bases_one_set $mode (tracer correctness): how each coroutine ended" \
		'["","returned","returned","returned","returned","abandoned","abandoned","abandoned","abandoned"]' \
		"$(tp_end_hows stack_bases_one_set "$mode" "$pid")"
done
finish

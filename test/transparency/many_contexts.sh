# Three hundred coroutines on stacks of one size side by side, resumed in turn, more than a
# thread's lookup hints hold: the program runs as untraced, and every switch to and from each
# coroutine is its own in the trace (4 to each: its start and 3 resumes; 4 from each: 3 suspends
# and its return).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare many_contexts --expect "exit 0" -- "$TP_BIN/many_contexts"
check "many_contexts: untraced, every coroutine ran its rounds" \
	grep -qx "300 coroutines, 900 runs" "$WORK/many_contexts.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid many_contexts "$mode" many_contexts)
	expect_eq "many_contexts $mode (tracer correctness): 300 ucontext coroutines" 300 \
		"$(tq many_contexts "$mode" "$(tp_ucontext_coros "$pid") | length")"
	expect_eq "many_contexts $mode (tracer correctness): 4 switches to and 4 from each" \
		'[[4,4]]' "$(tp_switch_counts many_contexts "$mode" "$pid" | jq -c unique)"
	expect_eq "many_contexts $mode (tracer correctness): each returned" '["returned"]' \
		"$(tp_end_hows many_contexts "$mode" "$pid" | jq -c unique)"
done
finish

# Coroutines made while a SIGALRM handler switches coroutines every 100 us
# (make_under_signals.c): the program runs as untraced, and the trace has every coroutine it
# made, the handler's helper with them. The tracer's work at a making runs on its walk stack, and a
# handler's switch that lands meanwhile must leave that work's frames alone (the switch stubs then
# stay on the stack they came on) and still be recorded.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare make_under_signals --expect "exit 0" -- "$TP_BIN/make_under_signals"
check "make_under_signals: untraced, all ran and the handler switched" \
	grep -qx "ran 20000 coroutines, handler round trips: some" \
	"$WORK/make_under_signals.native.out"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid make_under_signals "$mode" make_under_signals)
	made=$(tq make_under_signals "$mode" "[.[] | select(.type == \"coro\" and
		.pid == ${pid:-0} and (.kind == \"ucontext\" or .kind == \"fcontext\"))] | length")
	expect_eq "make_under_signals $mode (tracer correctness): the 20,000 made and the helper" \
		20001 "$made"
	into_helper=$(tq make_under_signals "$mode" "[.[] | select(.pid == ${pid:-0})] as \$l
		| ([\$l[] | select(.type == \"coro\" and .kind == \"ucontext\")][0].coro) as \$h
		| [\$l[] | select(.type == \"switch\" and .to == \$h)] | length")
	check "make_under_signals $mode (tracer correctness): the handler's switches to its helper recorded ($into_helper)" \
		test "${into_helper:-0}" -ge 1
done
finish

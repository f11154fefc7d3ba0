# SimGrid's raw contexts (raw_makecontext, raw_swapcontext from libsimgrid, SimGrid's default on
# x86-64), called as SimGrid calls them: the program runs as untraced, and the trace has both
# coroutines with every switch, the finished one ended (abandoned) when its stack was freed, and
# the parked one's last suspend whole (parked_in_leaf < parked_body): unwound from its saved raw
# context by the tracer's pass at the end, or, when the program is killed, by the collector.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare sg_raw_exit --expect "exit 0" -- "$TP_BIN/simgrid_raw" 0
# Killed: nothing runs at the end. The program waits for the parked one's whole stack to be in the
# trace (the collector unwinds it from the live process) before it kills itself.
compare sg_raw_kill --expect "signal KILL" --timeout 60 \
	--after-ready 'trace:"type":"stack".*"sym":"parked_in_leaf".*"sym":"parked_body"' \
	-- "$TP_BIN/simgrid_raw" 0 kill
check "simgrid_raw: untraced, every turn ran" \
	grep -qx "finished 50, parked 51" "$WORK/sg_raw_exit.native.out"
stacks="(map(select(.type == \"stack\") | {key: (.id | tostring), value: [.frames[].sym]})
	| from_entries) as \$s"
for name in sg_raw_exit sg_raw_kill; do
	for mode in "${TP_MODES[@]}"; do
		pid=$(tp_app_pid "$name" "$mode" simgrid_raw)
		coros="[.[] | select(.type == \"coro\" and .pid == ${pid:-0} and .kind == \"simgrid_raw\")]"
		expect_eq "$name $mode (tracer correctness): two simgrid_raw coroutines, their entries" \
			"finished_body parked_body" \
			"$(tq "$name" "$mode" "$coros | map(.entry) | join(\" \")")"
		# Resumed 51 times each (the start among them); every switch of the program is a
		# raw_swapcontext.
		expect_eq "$name $mode (tracer correctness): switches to each, all raw_swapcontext" \
			"[51,51]:204:204" \
			"$(tq "$name" "$mode" "$coros as \$c | [\$c[].coro as \$k | [.[] |
				select(.type == \"switch\" and .to == \$k)] | length] as \$n |
				[.[] | select(.type == \"switch\" and .pid == ${pid:-0})] as \$all |
				\"\(\$n | tojson):\(\$all | length):\([\$all[] |
				select(.how == \"raw_swapcontext\")] | length)\"")"
		expect_eq "$name $mode (tracer correctness): the finished one ended at the free" \
			"abandoned" \
			"$(tq "$name" "$mode" "($coros[0].coro) as \$k | [.[] | select(.type == \"coro_end\"
				and .coro == \$k) | .how] | join(\"+\")")"
		expect_eq "$name $mode (tracer correctness): the parked one's last suspend, whole" \
			"parked_in_leaf parked_body" \
			"$(tq "$name" "$mode" "$stacks | ($coros[1].coro) as \$k | [.[] |
				select(.type == \"switch\" and .from == \$k)] | last |
				\$s[.stack | tostring][0:2] | join(\" \")")"
	done
done
finish

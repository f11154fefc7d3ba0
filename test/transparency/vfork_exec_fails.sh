# vfork 8a: the vfork child's failed exec and _exit(255) are the child's, not the parent's: the
# parent exits 0, and its exit line in the trace says status 0 (tracer correctness: a vfork child
# shares the parent's memory, so anything it writes there becomes the parent's).
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare vfork_exec_fails --expect "exit 0" -- "$TP_BIN/vfork_missing"
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid vfork_exec_fails "$mode" vfork_missing)
	check "vfork_exec_fails $mode: the trace has the parent's process" [ -n "$pid" ]
	expect_eq "vfork_exec_fails $mode: the parent's exit lines in the trace (tracer correctness)" \
		'[{"status":0,"signal":null}]' \
		"$(tq vfork_exec_fails "$mode" "[.[] | select(.type == \"exit\" and .pid == ${pid:-0}) |
			{status, signal}] | tojson")"
done
finish
